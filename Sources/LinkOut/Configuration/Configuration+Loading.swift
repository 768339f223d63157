import Foundation
import Logging

extension Configuration {
    /// Command-line flags that override the file and the environment.
    package struct Overrides: Sendable {
        package var configPath: String?
        package var host: String?
        package var port: String?
        package var dataDir: String?

        package init(configPath: String? = nil, host: String? = nil, port: String? = nil, dataDir: String? = nil) {
            self.configPath = configPath
            self.host = host
            self.port = port
            self.dataDir = dataDir
        }
    }

    /// Whether the process loading the configuration takes payments (`serve`, and `check` before a launch), so
    /// the payment provider's settings must be whole: its secret key, its webhook secret, a catalog it can sell.
    /// The operator's other commands read or change the ledger only: a backup from cron, an export or an erasure
    /// run from a shell without the provider's secrets were refused ("payments.stripe.secretKey: is required").
    package enum ProviderUse: Sendable {
        case takesPayments
        case noPayments
    }

    /// Loads `config.json` (or `--config`/`LINKOUT_CONFIG`), applies the environment, then the flags.
    /// A missing default `config.json` means built-in defaults; a missing file that was asked for is an error.
    package static func load(
        overrides: Overrides = Overrides(),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        provider use: ProviderUse = .takesPayments
    ) throws(ConfigurationError) -> Configuration {
        // Empty is unset, for `LINKOUT_CONFIG` as for the others (`apply(environment:)`).
        let explicitPath = overrides.configPath ?? environment["LINKOUT_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        let path = explicitPath ?? "config.json"
        var configuration: Configuration
        switch ConfigurationFile.contents(atPath: path, limit: ConfigurationFile.textLimit) {
        case .success(let data):
            configuration = try parse(data, source: path, deferringSecretFiles: true)
        // No config.json is the built-in defaults; one that is there but cannot be read (a folder, its mode) is
        // not, or the server would start without its catalog and settings.
        case .failure(.missing) where explicitPath == nil:
            configuration = Configuration()
        case .failure(.missing), .failure(.unreadable):
            throw ConfigurationError(field: path, problem: "configuration file not found or not readable")
        case .failure(let failure):
            throw ConfigurationError(field: path, problem: ConfigurationFile.problem(failure, path: path))
        }
        try configuration.apply(environment: environment)
        try configuration.apply(overrides: overrides)
        // What only taking payments and sending webhooks needs: their secrets, a provider that can be made.
        if use == .takesPayments {
            if let unread = configuration.unreadSecretFiles.first { throw unread }
            try configuration.validateProvider()
            try configuration.webhooks.validate()
        }
        return configuration
    }

    mutating func apply(overrides: Overrides) throws(ConfigurationError) {
        if let host = overrides.host { server.host = host }
        if let port = overrides.port { server.port = try Self.parsePort(port, field: "--port") }
        if let dataDir = overrides.dataDir { storage.dataDir = try Self.parseDataDir(dataDir, field: "--data-dir") }
    }

    /// A data folder's path; an empty one (an unset variable in a compose file) names no folder.
    static func parseDataDir(_ text: String, field: String) throws(ConfigurationError) -> String {
        guard !text.isEmpty else {
            throw ConfigurationError(field: field, problem: "must name a folder (it is empty)")
        }
        return text
    }

    static func parsePort(_ text: String, field: String) throws(ConfigurationError) -> Int {
        guard let port = Int(text), (0...65535).contains(port) else {
            throw ConfigurationError(field: field, problem: "must be a port number from 0 to 65535")
        }
        return port
    }

    static func parseLevel(_ text: String, field: String) throws(ConfigurationError) -> Logger.Level {
        guard let level = Logger.Level(name: text) else {
            throw ConfigurationError(
                field: field,
                problem: "must be one of trace, debug, info, notice, warning, error, critical"
            )
        }
        return level
    }
}
