package import Domain

/// An app this server takes tokens for (`apps` in config.json).
package struct AppConfiguration: Sendable, Equatable {
    package var bundleId: BundleID
    /// Must equal the token's `appAppleId`.
    package var appAppleId: Int64
    /// Shown on the checkout page.
    package var name: String
    /// Universal link that opens the app after payment.
    package var returnURL: String?
    /// Custom URL scheme, the fallback way back into the app.
    package var urlScheme: String?
    /// The Apple Developer Team ID; with it, `/.well-known/apple-app-site-association` names this app.
    package var teamId: String?
    /// Paths on linkout's domain that open the app (`/.well-known/apple-app-site-association` components),
    /// e.g. `["/open/*"]`, for links people tap outside linkout's pages (a receipt e-mail).
    package var universalLinkPaths: [String] = []
    /// The seller's legal name, shown on the checkout: the person pays this company, not Apple.
    package var seller: String?
    /// The app's icon as a path on linkout's own host (a file under `Public/`, e.g. `/static/icons/app.png`):
    /// the pages' CSP loads images from no other origin. Without one, the pages draw the name's initial.
    package var icon: String?
    /// Terms, privacy, refunds, imprint and support address for the pages' footer.
    package var legal = LegalLinks()

    package init(bundleId: BundleID, appAppleId: Int64, name: String, returnURL: String?, urlScheme: String?) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.name = name
        self.returnURL = returnURL
        self.urlScheme = urlScheme
    }

    /// The app a fresh configuration knows: the one Apple's example tokens are for.
    static let example = AppConfiguration(
        bundleId: "com.example",
        appAppleId: 1_234_567_890,
        name: "Example",
        returnURL: "https://example.com/open",
        urlScheme: "example"
    )

    /// Where "Cancel and return to the app" and "Open the app" lead: the universal link, else the custom scheme.
    var openURL: String? {
        returnURL ?? urlScheme.map { $0 + "://" }
    }

    static func readList(_ list: [JSONFields]) throws(ConfigurationError) -> [AppConfiguration] {
        var apps: [AppConfiguration] = []
        for item in list {
            try item.rejectUnknownKeys([
                "bundleId", "appAppleId", "name", "returnURL", "urlScheme", "teamId", "universalLinkPaths", "seller",
                "icon", "legal",
            ])
            var app = AppConfiguration(
                bundleId: try BundleID(item.requiredString("bundleId")),
                appAppleId: try item.requiredInteger("appAppleId"),
                name: try item.requiredString("name"),
                returnURL: try item.object["returnURL"] == nil ? nil : item.requiredString("returnURL"),
                urlScheme: try item.object["urlScheme"] == nil ? nil : item.requiredString("urlScheme")
            )
            // The app's link back is `<urlScheme>://purchase?code=…`: a scheme of RFC 3986 §3.1's shape (a letter,
            // then letters, digits, `+`, `-`, `.`), written without `://`.
            if let scheme = app.urlScheme, !Self.isURLScheme(scheme) {
                throw ConfigurationError(
                    field: item.name("urlScheme"),
                    problem: "must be a URL scheme such as \"example\" (a letter, then letters, digits, + - or .; "
                        + "no \"://\")"
                )
            }
            app.teamId = try item.optionalString("teamId")
            if let team = app.teamId,
                team.utf8.count != 10
                    || !team.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) })
            {
                throw ConfigurationError(field: item.name("teamId"), problem: "must be the 10-character Team ID")
            }
            app.seller = try item.optionalString("seller")
            app.icon = try item.optionalString("icon")
            if let icon = app.icon, !icon.hasPrefix("/") || icon.hasPrefix("//") {
                throw ConfigurationError(
                    field: item.name("icon"),
                    problem:
                        "must be a path on this server such as /static/icons/app.png (the pages load no other origin)"
                )
            }
            app.legal = try LegalLinks.read(try item.section("legal"))
            app.universalLinkPaths = try item.strings("universalLinkPaths")
            if let path = app.universalLinkPaths.first(where: { !$0.hasPrefix("/") }) {
                throw ConfigurationError(field: item.name("universalLinkPaths"), problem: "\(path) must start with /")
            }
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
        return apps
    }

    /// RFC 3986 §3.1: `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    static func isURLScheme(_ text: String) -> Bool {
        let isLetter = { (byte: UInt8) in (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) }
        guard let first = text.utf8.first, isLetter(first) else { return false }
        return text.utf8.allSatisfy { byte in
            isLetter(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ".")
        }
    }
}
