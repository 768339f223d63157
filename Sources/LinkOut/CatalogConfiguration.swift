/// An app this server takes tokens for (`apps` in config.json).
public struct AppConfiguration: Sendable, Equatable {
    public var bundleId: String
    /// Must equal the token's `appAppleId`.
    public var appAppleId: Int64
    /// Shown on the checkout page.
    public var name: String
    /// Universal link that opens the app after payment.
    public var returnURL: String?
    /// Custom URL scheme, the fallback way back into the app.
    public var urlScheme: String?
}

/// A product offered on the checkout page (`catalog` in config.json).
public struct Product: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case oneTime
        case subscription
    }

    public var id: String
    public var kind: Kind
    /// Name by language code (`en`, `de`, ...).
    public var names: [String: String]
    /// Price by currency code.
    public var prices: [String: Money]

    /// The name in `language`, else English, else any.
    public func name(language: String) -> String {
        names[language] ?? names["en"] ?? names.values.sorted().first ?? id
    }
}

/// The StoreKit redirect target (`landing` in config.json).
public struct LandingConfiguration: Sendable, Equatable {
    /// Paths that accept `?externalPurchaseToken=`. Default `["/"]`.
    public var paths = ["/"]
    /// Whether a visit without a token gets a checkout (US link-outs carry none). Default true.
    public var allowWithoutToken = true
    /// The app a tokenless visit is for. Default `com.example`.
    public var defaultBundleId = "com.example"
}

extension Configuration {
    /// Paths the server itself uses; a landing path may not shadow them.
    static let reservedPrefixes = ["/checkout", "/static", "/v1", "/healthz", "/readyz", "/metrics", "/admin"]

    mutating func readLanding(_ section: JSONFields) throws(ConfigurationError) {
        try section.rejectUnknownKeys(["paths", "allowWithoutToken", "defaultBundleId"])
        landing.paths = try section.strings("paths", default: landing.paths)
        guard !landing.paths.isEmpty else {
            throw ConfigurationError(field: "landing.paths", problem: "must list at least one path")
        }
        for (index, path) in landing.paths.enumerated() {
            let field = "landing.paths[\(index)]"
            guard path.hasPrefix("/"), !path.contains("?"), !path.contains("{"), !path.contains("#") else {
                throw ConfigurationError(field: field, problem: "must be a plain path starting with /")
            }
            if Self.reservedPrefixes.contains(where: { path == $0 || path.hasPrefix($0 + "/") }) {
                throw ConfigurationError(field: field, problem: "is used by linkout itself")
            }
        }
        landing.allowWithoutToken = try section.bool("allowWithoutToken", default: landing.allowWithoutToken)
        landing.defaultBundleId = try section.string("defaultBundleId", default: landing.defaultBundleId)
    }

    mutating func readApps(_ list: [JSONFields]) throws(ConfigurationError) {
        apps = []
        for item in list {
            try item.rejectUnknownKeys(["bundleId", "appAppleId", "name", "returnURL", "urlScheme"])
            let app = AppConfiguration(
                bundleId: try item.requiredString("bundleId"),
                appAppleId: try item.requiredInteger("appAppleId"),
                name: try item.requiredString("name"),
                returnURL: try item.object["returnURL"] == nil ? nil : item.requiredString("returnURL"),
                urlScheme: try item.object["urlScheme"] == nil ? nil : item.requiredString("urlScheme")
            )
            guard !app.bundleId.isEmpty else {
                throw ConfigurationError(field: item.name("bundleId"), problem: "is empty")
            }
            guard app.appAppleId > 0 else {
                throw ConfigurationError(field: item.name("appAppleId"), problem: "must be a positive integer")
            }
            if apps.contains(where: { $0.bundleId == app.bundleId }) {
                throw ConfigurationError(field: item.name("bundleId"), problem: "is listed twice")
            }
            apps.append(app)
        }
    }

    mutating func readCatalog(_ list: [JSONFields]) throws(ConfigurationError) {
        catalog = []
        for item in list {
            try item.rejectUnknownKeys(["id", "type", "name", "price"])
            let id = try item.requiredString("id")
            guard !id.isEmpty, !catalog.contains(where: { $0.id == id }) else {
                throw ConfigurationError(field: item.name("id"), problem: "must be present and unique")
            }
            guard let kind = Product.Kind(rawValue: try item.string("type", default: "oneTime")) else {
                throw ConfigurationError(field: item.name("type"), problem: "must be oneTime or subscription")
            }
            let names = try item.stringMap("name")
            guard !names.isEmpty else {
                throw ConfigurationError(field: item.name("name"), problem: "needs at least one language")
            }
            var prices: [String: Money] = [:]
            for (currency, text) in try item.stringMap("price") {
                guard let money = Money(currency: currency, decimal: text) else {
                    throw ConfigurationError(
                        field: item.name("price") + "." + currency,
                        problem: "must be a decimal amount like \"29.99\" in a three-letter currency"
                    )
                }
                prices[currency] = money
            }
            guard !prices.isEmpty else {
                throw ConfigurationError(field: item.name("price"), problem: "needs at least one currency")
            }
            catalog.append(Product(id: id, kind: kind, names: names, prices: prices))
        }
    }

    /// Cross-field checks once every section is read.
    func validateReferences() throws(ConfigurationError) {
        if landing.allowWithoutToken && !apps.contains(where: { $0.bundleId == landing.defaultBundleId }) {
            throw ConfigurationError(field: "landing.defaultBundleId", problem: "is not one of the configured apps")
        }
    }
}
