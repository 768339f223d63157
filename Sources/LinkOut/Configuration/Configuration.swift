import Domain
import ExternalPurchase
package import Foundation
package import HTTPServer
package import Logging
import Outbound
import Payments

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
    /// The payment provider's and the webhooks' secret files that could not be read (missing, unreadable,
    /// empty): an error for what takes payments and sends webhooks (`Configuration.ProviderUse`), nothing to a
    /// command that only reads or changes the ledger, such as a backup from cron where they are not mounted.
    var unreadSecretFiles: [ConfigurationError] = []
    package var redemption = Redemption()
    package var appEntitlements = AppEntitlements()
    package var retention = Retention()
    package var close = Close()
    package var commission = Commission()
    /// `logging.level`: trace, debug, info, notice, warning, error or critical. Default info.
    package var logLevel = Logger.Level.info
    /// `logging.accessLog`: `all` (default), `errors` or `off`.
    package var accessLog = AccessLogMode.all
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
        configuration.requestIDPeers = Set(server.trustedProxies.compactMap(PeerAddress.canonical))
        return configuration
    }

    static let knownSections: Set<String> = [
        "server", "storage", "logging", "landing", "apps", "catalog", "apple", "reporting", "payments", "webhooks",
        "redemption", "commission", "close", "appEntitlements", "retention",
    ]

    /// Parses the JSON text of a configuration file. An unreadable secret file of the payment provider or the
    /// webhooks is an error, unless `deferringSecretFiles` (it is then in `unreadSecretFiles`).
    package static func parse(
        _ file: Data,
        source: String = "config.json",
        deferringSecretFiles: Bool = false
    ) throws(ConfigurationError) -> Configuration {
        let data = try ConfigurationFile.jsonText(file, field: source)
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw ConfigurationError(field: source, problem: "not valid JSON")
        }
        guard case .object(let object) = root else {
            throw ConfigurationError(field: source, problem: "must hold a JSON object")
        }
        // A section or key written twice is one of two settings silently lost (the parser keeps one); the file
        // is refused so the operator decides which.
        if let key = TokenDecoder.duplicateKeyAnywhere(in: Array(data), maxDepth: 64) {
            throw ConfigurationError(field: source, problem: "names \"\(key)\" twice in one object")
        }
        if let path = root.pathOfNUL() {
            throw ConfigurationError(field: path, problem: "holds a NUL character (\\u0000), which no setting takes")
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
        configuration.payments = try Payments.read(
            try fields.section("payments"),
            unreadSecretFiles: &configuration.unreadSecretFiles
        )
        configuration.webhooks = try Webhooks.read(
            try fields.section("webhooks"),
            unreadSecretFiles: &configuration.unreadSecretFiles
        )
        configuration.redemption = try Redemption.read(try fields.section("redemption"))
        configuration.appEntitlements = try AppEntitlements.read(try fields.section("appEntitlements"))
        configuration.retention = try Retention.read(try fields.section("retention"))
        configuration.close = try Close.read(try fields.section("close"))
        configuration.commission = try Commission.read(try fields.section("commission"))
        let logging = try fields.section("logging")
        try logging.rejectUnknownKeys(["level", "accessLog"])
        if let level = try logging.optionalString("level") {
            configuration.logLevel = try parseLevel(level, field: "logging.level")
        }
        if let mode = try logging.optionalString("accessLog") {
            configuration.accessLog = try AccessLogMode.parse(mode, field: "logging.accessLog")
        }
        try configuration.validateReferences()
        if !deferringSecretFiles, let unread = configuration.unreadSecretFiles.first { throw unread }
        return configuration
    }

    /// Cross-field checks once every section is read.
    func validateReferences() throws(ConfigurationError) {
        // A claim on a report or webhook must outlast the send it covers, or another instance takes it over
        // and sends it again while the first is still waiting for its answer.
        let longestSend = max(reporting.requestTimeoutSeconds, webhooks.isEnabled ? webhooks.timeoutSeconds : 0)
        guard storage.leaseSeconds > longestSend else {
            throw ConfigurationError(
                field: "storage.leaseSeconds",
                problem: "must be longer than the longest send (\(longestSend) s: reporting.requestTimeoutSeconds, "
                    + "webhooks.timeoutSeconds)"
            )
        }
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
        // A universal link path that covered linkout's own pages would make iOS open the app instead of them.
        let ownPaths = landing.paths + LandingConfiguration.reservedPrefixes.map { $0 + "/x" }
        for (index, app) in apps.enumerated() {
            for pattern in app.universalLinkPaths where ownPaths.contains(where: { Self.path($0, matches: pattern) }) {
                throw ConfigurationError(
                    field: "apps[\(index)].universalLinkPaths",
                    problem: "\(pattern) covers linkout's own pages; use a path of its own such as /open/*"
                )
            }
        }
        // Apple takes reports only in its reporting currencies; a sale in another one needs a rate to EUR or USD
        // (Apple: "reportingCurrency", "exchangeRate"). Without one it could never be reported, so refuse to sell in
        // it.
        var rates = payments.exchangeRates
        if let file = payments.exchangeRatesFile { rates = rates.overlaid(by: try Payments.ratesFile(file)) }
        for (index, product) in catalog.enumerated() {
            for currency in product.prices.keys.sorted()
            where !ReportValidator.reportingCurrencies.contains(CurrencyCode(currency))
                && rates.entries[currency] == nil
            {
                throw ConfigurationError(
                    field: "catalog[\(index)].price.\(currency)",
                    problem: "Apple does not take reports in \(currency): add payments.exchangeRates.\(currency)"
                )
            }
        }
        try Self.checkReportable(catalog, rates: rates)
        if landing.allowWithoutToken && !apps.contains(where: { $0.bundleId == landing.defaultBundleId }) {
            throw ConfigurationError(field: "landing.defaultBundleId", problem: "is not one of the configured apps")
        }
    }

    /// Whether an apple-app-site-association path pattern (`*` any run, `?` one character) matches `path`.
    static func path(_ path: String, matches pattern: String) -> Bool {
        let text = Array(path.utf8)
        let glob = Array(pattern.utf8)
        var memo: [Int: Bool] = [:]
        func match(_ t: Int, _ g: Int) -> Bool {
            let key = t * (glob.count + 1) + g
            if let known = memo[key] { return known }
            let result: Bool
            if g == glob.count {
                result = t == text.count
            } else if glob[g] == UInt8(ascii: "*") {
                result = match(t, g + 1) || (t < text.count && match(t + 1, g))
            } else {
                result = t < text.count && (glob[g] == UInt8(ascii: "?") || glob[g] == text[t]) && match(t + 1, g + 1)
            }
            memo[key] = result
            return result
        }
        return match(0, 0)
    }

    /// An absolute http or https URL; one the server calls (`called`) also in visible ASCII (`OutboundURL`).
    static func requireHTTPURL(_ text: String, field: String, called: Bool = false) throws(ConfigurationError) {
        guard OutboundURL.isAbsoluteHTTP(text) else {
            throw ConfigurationError(field: field, problem: "must be an absolute http or https URL")
        }
        guard !called || VisibleASCII.holds(text) else {
            throw ConfigurationError(
                field: field,
                problem: "holds a space, a line break or a character outside ASCII: the server calls this URL as it "
                    + "is written (percent-encode the path; write a domain as xn--…)"
            )
        }
    }
}
