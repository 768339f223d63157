import Foundation
import HTTPServer
import Logging

/// linkout's whole configuration, built in one place from `config.json`, then `LINKOUT_*` environment variables,
/// then command-line flags (each beats the one before). Every field has a working default, written once: on the
/// section's type, which the parser starts from.
package struct Configuration: Sendable {
    package var server = Server()
    package var storage = Storage()
    package var landing = LandingConfiguration()
    package var apps = [AppConfiguration.example]
    package var catalog = Product.defaultCatalog
    package var apple = Apple()
    package var reporting = Reporting()
    package var payments = Payments()
    package var webhooks = Webhooks()
    package var redemption = Redemption()
    /// `logging.level`: trace, debug, info, notice, warning, error or critical. Default info.
    package var logLevel = Logger.Level.info
    /// `LINKOUT_ADMIN_TOKEN`: enables the admin API when set. Never read from config.json.
    package var adminToken: String?
    /// `LINKOUT_API_TOKEN`: bearer token for the developer's backend (`POST /v1/tokens/{id}/line-items`).
    package var apiToken: String?

    package init() {}

    /// The settings of the HTTP core derived from this configuration.
    package var httpServer: HTTPServer.Configuration {
        var configuration = HTTPServer.Configuration()
        configuration.host = server.host
        configuration.port = server.port
        configuration.maxConnections = server.maxConnections
        configuration.maxConnectionsPerClient = server.maxConnectionsPerClient
        configuration.firstByteTimeout = .seconds(server.firstByteTimeoutSeconds)
        configuration.workerThreads = server.workerThreads
        configuration.limits.maxBodyBytes = server.maxBodyBytes
        configuration.idleTimeout = .seconds(server.idleTimeoutSeconds)
        configuration.requestHeadTimeout = .seconds(server.requestHeadTimeoutSeconds)
        return configuration
    }

    static let knownSections: Set<String> = [
        "server", "storage", "logging", "landing", "apps", "catalog", "apple", "reporting", "payments", "webhooks",
        "redemption",
    ]

    /// Parses the JSON text of a configuration file.
    package static func parse(_ data: Data, source: String = "config.json") throws(ConfigurationError) -> Configuration
    {
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
        configuration.server = try Server.read(try fields.section("server"))
        configuration.storage = try Storage.read(try fields.section("storage"))
        configuration.landing = try LandingConfiguration.read(try fields.section("landing"))
        if fields.object["apps"] != nil { configuration.apps = try AppConfiguration.readList(try fields.list("apps")) }
        if fields.object["catalog"] != nil { configuration.catalog = try Product.readList(try fields.list("catalog")) }
        configuration.apple = try Apple.read(try fields.section("apple"))
        configuration.reporting = try Reporting.read(try fields.section("reporting"))
        configuration.payments = try Payments.read(try fields.section("payments"))
        configuration.webhooks = try Webhooks.read(try fields.section("webhooks"))
        configuration.redemption = try Redemption.read(try fields.section("redemption"))
        let logging = try fields.section("logging")
        try logging.rejectUnknownKeys(["level"])
        if let level = try logging.optionalString("level") {
            configuration.logLevel = try parseLevel(level, field: "logging.level")
        }
        try configuration.validateReferences()
        return configuration
    }

    /// Cross-field checks once every section is read.
    func validateReferences() throws(ConfigurationError) {
        // iOS opens a universal link in the app only when the tap leads to another domain than the page's own;
        // a return link on linkout's own host would stay in Safari.
        let ownHost = URL(string: server.publicURL)?.host?.lowercased()
        for (index, app) in apps.enumerated() {
            guard let returnURL = app.returnURL else { continue }
            guard let url = URL(string: returnURL), url.scheme == "https", let host = url.host?.lowercased() else {
                throw ConfigurationError(field: "apps[\(index)].returnURL", problem: "must be an https universal link")
            }
            if host == ownHost {
                throw ConfigurationError(
                    field: "apps[\(index)].returnURL",
                    problem: "is on the host of server.publicURL (\(host)); iOS opens a universal link in the app only "
                        + "when it leads to another domain, so put the app's link on a domain of its own"
                )
            }
        }
        if landing.allowWithoutToken && !apps.contains(where: { $0.bundleId == landing.defaultBundleId }) {
            throw ConfigurationError(field: "landing.defaultBundleId", problem: "is not one of the configured apps")
        }
    }

    static func requireHTTPURL(_ text: String, field: String) throws(ConfigurationError) {
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ConfigurationError(field: field, problem: "must be an absolute http or https URL")
        }
    }
}
