extension Configuration {
    /// `apple` section: App Store Connect key and API hosts (used by reporting).
    package struct Apple: Sendable {
        /// Issuer ID from App Store Connect's Keys page (`LINKOUT_APPLE_ISSUER_ID`).
        package var issuerId = ""
        /// Key ID of the In-App Purchase key (`LINKOUT_APPLE_KEY_ID`).
        package var keyId = ""
        /// Path of the `.p8` file (`LINKOUT_APPLE_PRIVATE_KEY_FILE`). Never baked into an image.
        package var privateKeyFile = ""
        package var productionURL = "https://api.storekit.apple.com"
        package var sandboxURL = "https://api.storekit-sandbox.apple.com"
        /// CA certificates to trust instead of the system store (a test CA). TLS verification stays on.
        package var caFile: String?
        /// Outbound proxy for calls to Apple, e.g. `http://proxy:3128`.
        package var proxy: String?
        /// Where Apple POSTs App Store Server Notifications V2 (the URL entered in App Store Connect).
        package var notificationPath = "/notifications/appstore"
        /// PEM files of the roots a notification's chain may end in. Empty: Apple Root CA - G3, shipped with the code
        /// (validate against a root you ship, never the one inside `x5c`; docs/apple-facts.md, "Verifying a signed
        /// notification").
        package var notificationRootCertificates: [String] = []

        package init() {}

        static func read(_ section: JSONFields) throws(ConfigurationError) -> Apple {
            try section.rejectUnknownKeys([
                "issuerId", "keyId", "privateKeyFile", "productionURL", "sandboxURL", "caFile", "proxy",
                "notificationPath", "notificationRootCertificates",
            ])
            var apple = Apple()
            // Empty is unset; any other kind of value is a mistake to name (one was ignored, and calls to Apple
            // went out without the proxy or CA the operator wrote).
            apple.caFile = try section.optionalString("caFile").flatMap { $0.isEmpty ? nil : $0 }
            apple.proxy = try section.optionalString("proxy").flatMap { $0.isEmpty ? nil : $0 }
            apple.issuerId = try section.string("issuerId", default: apple.issuerId)
            apple.keyId = try section.string("keyId", default: apple.keyId)
            apple.privateKeyFile = try section.string("privateKeyFile", default: apple.privateKeyFile)
            apple.productionURL = try section.string("productionURL", default: apple.productionURL)
            apple.sandboxURL = try section.string("sandboxURL", default: apple.sandboxURL)
            try Configuration.requireHTTPURL(apple.productionURL, field: "apple.productionURL", called: true)
            try Configuration.requireHTTPURL(apple.sandboxURL, field: "apple.sandboxURL", called: true)
            apple.notificationPath = try section.string("notificationPath", default: apple.notificationPath)
            guard apple.notificationPath.hasPrefix("/"), !apple.notificationPath.contains("{") else {
                throw ConfigurationError(field: "apple.notificationPath", problem: "must be a path starting with /")
            }
            // As for landing paths: a configured route never takes over one of linkout's own (`/v1/tokens` here
            // would answer the app's forwarded tokens as notifications). `/notifications` is where it lives.
            if LandingConfiguration.isReserved(apple.notificationPath, except: "/notifications") {
                throw ConfigurationError(field: "apple.notificationPath", problem: "is used by linkout itself")
            }
            apple.notificationRootCertificates = try section.strings("notificationRootCertificates")
            return apple
        }
    }
}
