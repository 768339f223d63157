/// The seller's legal pages and support address (`apps[].legal` in config.json), shown in the footer of every
/// page about the app: a person paying outside the App Store needs to know who to ask and on what terms.
package struct LegalLinks: Sendable, Equatable {
    /// Terms of sale.
    package var terms: String?
    /// Privacy policy.
    package var privacy: String?
    /// Refund and cancellation policy (the EU right of withdrawal belongs here).
    package var refunds: String?
    /// Imprint (the German "Impressum"; required for sellers in Germany and Austria).
    package var imprint: String?
    /// Where people write for help and to cancel a subscription.
    package var supportEmail: String?

    package init() {}

    static func read(_ section: JSONFields) throws(ConfigurationError) -> LegalLinks {
        try section.rejectUnknownKeys(["terms", "privacy", "refunds", "imprint", "supportEmail"])
        var links = LegalLinks()
        links.terms = try link(section, "terms")
        links.privacy = try link(section, "privacy")
        links.refunds = try link(section, "refunds")
        links.imprint = try link(section, "imprint")
        links.supportEmail = try section.optionalString("supportEmail")
        if let email = links.supportEmail {
            let parts = email.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
                !email.contains(where: { $0 == " " || $0 == "<" || $0 == ">" || $0 == "?" })
            else {
                throw ConfigurationError(field: section.name("supportEmail"), problem: "must be an e-mail address")
            }
        }
        return links
    }

    /// An absolute http(s) URL, or a path on linkout's own host (a page under `Public/`).
    private static func link(_ section: JSONFields, _ key: String) throws(ConfigurationError) -> String? {
        guard let text = try section.optionalString(key) else { return nil }
        if text.hasPrefix("/") && !text.hasPrefix("//") { return text }
        try Configuration.requireHTTPURL(text, field: section.name(key))
        return text
    }
}
