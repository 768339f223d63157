package import Domain

/// The StoreKit redirect target (`landing` in config.json).
package struct LandingConfiguration: Sendable, Equatable {
    /// Paths that accept `?externalPurchaseToken=`. Default `["/"]`.
    package var paths = ["/"]
    /// Whether a visit without a token gets a checkout (US link-outs carry none). Default true.
    package var allowWithoutToken = true
    /// The app a tokenless visit is for. Default `com.example`.
    package var defaultBundleId: BundleID = "com.example"

    package init() {}

    /// Paths the server itself uses; a landing path may not shadow them.
    static let reservedPrefixes = [
        "/checkout", "/static", "/v1", "/healthz", "/readyz", "/metrics", "/admin", "/pay", "/webhooks",
        "/notifications", "/.well-known", "/favicon.ico", "/apple-touch-icon.png", "/openapi.json",
    ]

    /// Whether `path` is one of linkout's own or below one (`except` a prefix the caller's route lives under): a
    /// configured path never takes over a built-in route.
    static func isReserved(_ path: String, except allowed: String? = nil) -> Bool {
        reservedPrefixes.contains { $0 != allowed && (path == $0 || path.hasPrefix($0 + "/")) }
    }

    static func read(_ section: JSONFields) throws(ConfigurationError) -> LandingConfiguration {
        try section.rejectUnknownKeys(["paths", "allowWithoutToken", "defaultBundleId"])
        var landing = LandingConfiguration()
        landing.paths = try section.strings("paths", default: landing.paths)
        guard !landing.paths.isEmpty else {
            throw ConfigurationError(field: "landing.paths", problem: "must list at least one path")
        }
        for (index, path) in landing.paths.enumerated() {
            let field = "landing.paths[\(index)]"
            guard path.hasPrefix("/"), !path.contains("?"), !path.contains("{"), !path.contains("#") else {
                throw ConfigurationError(field: field, problem: "must be a plain path starting with /")
            }
            if isReserved(path) {
                throw ConfigurationError(field: field, problem: "is used by linkout itself")
            }
        }
        landing.allowWithoutToken = try section.bool("allowWithoutToken", default: landing.allowWithoutToken)
        landing.defaultBundleId = BundleID(
            try section.string("defaultBundleId", default: landing.defaultBundleId.rawValue)
        )
        return landing
    }
}
