import Foundation
import HTTPServer
import Logging

/// linkout's whole configuration, built in one place from `config.json`, then `LINKOUT_*` environment variables,
/// then command-line flags (each beats the one before). Every field has a working default.
public struct Configuration: Sendable {
    /// `server` section.
    public struct Server: Sendable {
        /// Bind address. Default `0.0.0.0`.
        public var host = "0.0.0.0"
        /// Bind port; 0 picks a free one. Default 8080.
        public var port = 8080
        /// The public base URL people reach the server at (used for absolute links and the Secure cookie flag).
        public var publicURL = "http://localhost:8080"
        /// Addresses of reverse proxies whose `X-Forwarded-For` is believed.
        public var trustedProxies: [String] = []
        /// Folder of templates, styles and images served under `/static/`. Default `Public`.
        public var publicDir = "Public"
        /// Most connections served at once (503 above). Default 10,000.
        public var maxConnections = 10_000
        /// Threads for blocking handlers. Default 16.
        public var workerThreads = 16
        /// Largest request body accepted (413 above). Default 1 MiB.
        public var maxBodyBytes = 1024 * 1024
        /// Keep-alive idle timeout in seconds. Default 60.
        public var idleTimeoutSeconds = 60
        /// Seconds a client may take to send its request headers (408 after). Default 10.
        public var requestHeadTimeoutSeconds = 10
        /// Seconds in-flight requests get to finish after SIGTERM. Default 10.
        public var shutdownGraceSeconds = 10
        /// Landing and API requests per second per client, sustained (`LINKOUT_RATE_LIMIT_PER_SECOND`); 0 turns
        /// the limit off. Default 10.
        public var rateLimitPerSecond = 10
        /// Requests a client may make at once before the sustained rate applies. Default 40.
        public var rateLimitBurst = 40
    }

    /// `apple` section: App Store Connect key and API hosts (used by reporting).
    public struct Apple: Sendable {
        /// Issuer ID from App Store Connect's Keys page (`LINKOUT_APPLE_ISSUER_ID`).
        public var issuerId = ""
        /// Key ID of the In-App Purchase key (`LINKOUT_APPLE_KEY_ID`).
        public var keyId = ""
        /// Path of the `.p8` file (`LINKOUT_APPLE_PRIVATE_KEY_FILE`). Never baked into an image.
        public var privateKeyFile = ""
        public var productionURL = "https://api.storekit.apple.com"
        public var sandboxURL = "https://api.storekit-sandbox.apple.com"
        /// CA certificates to trust instead of the system store (a test CA). TLS verification stays on.
        public var caFile: String?
        /// Outbound proxy for calls to Apple, e.g. `http://proxy:3128`.
        public var proxy: String?
    }

    /// `reporting` section.
    public struct Reporting: Sendable {
        /// A token without line items is reported `NO_LINE_ITEM` after this many seconds. Default 48 hours.
        public var noLineItemAfterSeconds: Int64 = 172_800
        /// How often the reporting service looks for due reports (it is also woken by new line items).
        public var pollIntervalSeconds: Int64 = 30
        /// Total time allowed for one call to Apple. Default 15.
        public var requestTimeoutSeconds: Int64 = 15
    }

    public var server = Server()
    /// `storage.dataDir`: where the SQLite ledger lives. Default `data`.
    public var dataDir = "data"
    /// `storage.durability`: `full` (fsync every commit; survives power loss) or `normal`. Default full.
    public var durability = "full"
    public var landing = LandingConfiguration()
    public var apps = [
        AppConfiguration(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            name: "Example",
            returnURL: "https://example.com/open",
            urlScheme: "example"
        )
    ]
    public var catalog: [Product] = [
        Product(
            id: "pro.lifetime",
            kind: .oneTime,
            names: ["en": "Pro forever", "de": "Pro für immer"],
            prices: ["EUR": Money(currency: "EUR", decimal: "29.99"), "USD": Money(currency: "USD", decimal: "29.99")]
                .compactMapValues { $0 }
        )
    ]
    public var apple = Apple()
    public var reporting = Reporting()
    /// `payments.provider`. Default `demo`.
    public var paymentProvider = "demo"
    /// `logging.level`: trace, debug, info, notice, warning, error or critical. Default info.
    public var logLevel = Logger.Level.info
    /// `LINKOUT_ADMIN_TOKEN`: enables the admin API when set. Never read from config.json.
    public var adminToken: String?
    /// `LINKOUT_API_TOKEN`: bearer token for the developer's backend (`POST /v1/tokens/{id}/line-items`).
    public var apiToken: String?

    public init() {}

    /// The settings of the HTTP core derived from this configuration.
    public var httpServer: HTTPServer.Configuration {
        var configuration = HTTPServer.Configuration()
        configuration.host = server.host
        configuration.port = server.port
        configuration.maxConnections = server.maxConnections
        configuration.workerThreads = server.workerThreads
        configuration.limits.maxBodyBytes = server.maxBodyBytes
        configuration.idleTimeout = .seconds(server.idleTimeoutSeconds)
        configuration.requestHeadTimeout = .seconds(server.requestHeadTimeoutSeconds)
        return configuration
    }
}

extension Configuration {
    /// Command-line flags that override the file and the environment.
    public struct Overrides: Sendable {
        public var configPath: String?
        public var host: String?
        public var port: String?
        public var dataDir: String?

        public init(configPath: String? = nil, host: String? = nil, port: String? = nil, dataDir: String? = nil) {
            self.configPath = configPath
            self.host = host
            self.port = port
            self.dataDir = dataDir
        }
    }

    /// Loads `config.json` (or `--config`/`LINKOUT_CONFIG`), applies the environment, then the flags.
    /// A missing default `config.json` means built-in defaults; a missing file that was asked for is an error.
    public static func load(
        overrides: Overrides = Overrides(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> Configuration {
        let explicitPath = overrides.configPath ?? environment["LINKOUT_CONFIG"]
        let path = explicitPath ?? "config.json"
        var configuration: Configuration
        if let data = FileManager.default.contents(atPath: path) {
            configuration = try parse(data, source: path)
        } else if explicitPath != nil {
            throw ConfigurationError(field: path, problem: "configuration file not found or not readable")
        } else {
            configuration = Configuration()
        }
        try configuration.apply(environment: environment)
        try configuration.apply(overrides: overrides)
        return configuration
    }

    /// Parses the JSON text of a configuration file.
    public static func parse(_ data: Data, source: String = "config.json") throws(ConfigurationError) -> Configuration {
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw ConfigurationError(field: source, problem: "not valid JSON")
        }
        guard case .object(let object) = root else {
            throw ConfigurationError(field: source, problem: "must hold a JSON object")
        }
        let fields = JSONFields(object, path: "")
        try fields.rejectUnknownKeys(knownSections)
        var configuration = Configuration()
        try configuration.readServer(try fields.section("server"))
        let storage = try fields.section("storage")
        try storage.rejectUnknownKeys(["dataDir", "durability"])
        configuration.dataDir = try storage.string("dataDir", default: configuration.dataDir)
        configuration.durability = try storage.string("durability", default: "full")
        guard ["full", "normal"].contains(configuration.durability) else {
            throw ConfigurationError(field: "storage.durability", problem: "must be full or normal")
        }
        try configuration.readLanding(try fields.section("landing"))
        if fields.object["apps"] != nil { try configuration.readApps(try fields.list("apps")) }
        if fields.object["catalog"] != nil { try configuration.readCatalog(try fields.list("catalog")) }
        try configuration.readApple(try fields.section("apple"))
        let reporting = try fields.section("reporting")
        try reporting.rejectUnknownKeys(["noLineItemAfterSeconds", "pollIntervalSeconds", "requestTimeoutSeconds"])
        configuration.reporting.requestTimeoutSeconds = try reporting.integer(
            "requestTimeoutSeconds",
            default: 15,
            range: 1...300
        )
        configuration.reporting.noLineItemAfterSeconds = try reporting.integer(
            "noLineItemAfterSeconds",
            default: 172_800,
            range: 0...864_000
        )
        configuration.reporting.pollIntervalSeconds = try reporting.integer(
            "pollIntervalSeconds",
            default: 30,
            range: 1...3600
        )
        let payments = try fields.section("payments")
        try payments.rejectUnknownKeys(["provider"])
        configuration.paymentProvider = try payments.string("provider", default: "demo")
        let logging = try fields.section("logging")
        try logging.rejectUnknownKeys(["level"])
        configuration.logLevel = try parseLevel(try logging.string("level", default: "info"), field: "logging.level")
        try configuration.validateReferences()
        return configuration
    }

    private mutating func readApple(_ section: JSONFields) throws(ConfigurationError) {
        try section.rejectUnknownKeys([
            "issuerId", "keyId", "privateKeyFile", "productionURL", "sandboxURL", "caFile", "proxy",
        ])
        if case .string(let caFile) = section.object["caFile"], !caFile.isEmpty { apple.caFile = caFile }
        if case .string(let proxy) = section.object["proxy"], !proxy.isEmpty { apple.proxy = proxy }
        apple.issuerId = try section.string("issuerId", default: "")
        apple.keyId = try section.string("keyId", default: "")
        apple.privateKeyFile = try section.string("privateKeyFile", default: "")
        apple.productionURL = try section.string("productionURL", default: apple.productionURL)
        apple.sandboxURL = try section.string("sandboxURL", default: apple.sandboxURL)
        for (key, value) in [("productionURL", apple.productionURL), ("sandboxURL", apple.sandboxURL)] {
            guard let url = URL(string: value), url.scheme == "https" || url.scheme == "http", url.host != nil else {
                throw ConfigurationError(field: "apple." + key, problem: "must be an absolute http or https URL")
            }
        }
    }

    static let knownSections: Set<String> = [
        "server", "storage", "logging", "landing", "apps", "catalog", "apple", "reporting", "payments",
    ]

    private mutating func readServer(_ section: JSONFields) throws(ConfigurationError) {
        try section.rejectUnknownKeys([
            "host", "port", "publicURL", "trustedProxies", "publicDir", "maxConnections", "workerThreads",
            "maxBodyBytes", "idleTimeoutSeconds", "requestHeadTimeoutSeconds", "shutdownGraceSeconds",
            "rateLimitPerSecond", "rateLimitBurst",
        ])
        server.rateLimitPerSecond = Int(try section.integer("rateLimitPerSecond", default: 10, range: 0...1_000_000))
        server.rateLimitBurst = Int(try section.integer("rateLimitBurst", default: 40, range: 1...1_000_000))
        server.host = try section.string("host", default: server.host)
        server.port = Int(try section.integer("port", default: Int64(server.port), range: 0...65535))
        server.publicURL = try section.string("publicURL", default: server.publicURL)
        guard let url = URL(string: server.publicURL), url.scheme == "http" || url.scheme == "https", url.host != nil
        else { throw ConfigurationError(field: "server.publicURL", problem: "must be an absolute http or https URL") }
        server.trustedProxies = try section.strings("trustedProxies")
        server.publicDir = try section.string("publicDir", default: server.publicDir)
        server.maxConnections = Int(try section.integer("maxConnections", default: 10_000, range: 1...1_000_000))
        server.workerThreads = Int(try section.integer("workerThreads", default: 16, range: 1...1024))
        server.maxBodyBytes = Int(try section.integer("maxBodyBytes", default: 1 << 20, range: 1024...(64 << 20)))
        server.idleTimeoutSeconds = Int(try section.integer("idleTimeoutSeconds", default: 60, range: 1...3600))
        server.requestHeadTimeoutSeconds = Int(
            try section.integer("requestHeadTimeoutSeconds", default: 10, range: 1...600)
        )
        server.shutdownGraceSeconds = Int(try section.integer("shutdownGraceSeconds", default: 10, range: 0...600))
    }

    mutating func apply(environment: [String: String]) throws(ConfigurationError) {
        if let host = environment["LINKOUT_HOST"] { server.host = host }
        if let port = environment["LINKOUT_PORT"] { server.port = try Self.parsePort(port, field: "LINKOUT_PORT") }
        if let directory = environment["LINKOUT_DATA_DIR"] { dataDir = directory }
        if let level = environment["LINKOUT_LOG_LEVEL"] {
            logLevel = try Self.parseLevel(level, field: "LINKOUT_LOG_LEVEL")
        }
        if let token = environment["LINKOUT_ADMIN_TOKEN"], !token.isEmpty { adminToken = token }
        if let token = environment["LINKOUT_API_TOKEN"], !token.isEmpty { apiToken = token }
        // Secrets may come from files (Docker and Kubernetes secrets) instead of the environment itself.
        if let path = environment["LINKOUT_ADMIN_TOKEN_FILE"] {
            adminToken = try Self.secret(fromFile: path, field: "LINKOUT_ADMIN_TOKEN_FILE")
        }
        if let path = environment["LINKOUT_API_TOKEN_FILE"] {
            apiToken = try Self.secret(fromFile: path, field: "LINKOUT_API_TOKEN_FILE")
        }
        if let rate = environment["LINKOUT_RATE_LIMIT_PER_SECOND"] {
            guard let value = Int(rate), value >= 0 else {
                throw ConfigurationError(
                    field: "LINKOUT_RATE_LIMIT_PER_SECOND",
                    problem: "must be a whole number, 0 or more"
                )
            }
            server.rateLimitPerSecond = value
        }
        if let issuer = environment["LINKOUT_APPLE_ISSUER_ID"], !issuer.isEmpty { apple.issuerId = issuer }
        if let keyId = environment["LINKOUT_APPLE_KEY_ID"], !keyId.isEmpty { apple.keyId = keyId }
        if let file = environment["LINKOUT_APPLE_PRIVATE_KEY_FILE"], !file.isEmpty { apple.privateKeyFile = file }
    }

    mutating func apply(overrides: Overrides) throws(ConfigurationError) {
        if let host = overrides.host { server.host = host }
        if let port = overrides.port { server.port = try Self.parsePort(port, field: "--port") }
        if let dataDir = overrides.dataDir { self.dataDir = dataDir }
    }

    /// A secret from a file, without the trailing newline editors add; an empty or unreadable file is an error.
    static func secret(fromFile path: String, field: String) throws(ConfigurationError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(field: field, problem: "cannot read \(path)")
        }
        let secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !secret.isEmpty else { throw ConfigurationError(field: field, problem: "\(path) is empty") }
        return secret
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
