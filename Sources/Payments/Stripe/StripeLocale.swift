/// Which `locale` a Checkout Session gets for the page language (Stripe API reference: Create a Checkout Session):
/// Stripe's own code when it has one for the language (and region), else `auto`, which lets Stripe follow the browser.
public enum StripeLocale {
    /// Stripe Checkout's locales (stripe-python 16.1.0), `auto` aside.
    public static let supported: [String] = [
        "bg", "cs", "da", "de", "el", "en", "en-GB", "es", "es-419", "et", "fi", "fil", "fr", "fr-CA", "hi-IN", "hr",
        "hu", "id", "it", "ja", "ko", "lt", "lv", "ms", "mt", "nb", "nl", "pl", "pt", "pt-BR", "ro", "ru", "sk", "sl",
        "sv", "th", "tr", "vi", "zh", "zh-HK", "zh-TW",
    ]

    private static let byLowercased: [String: String] = Dictionary(
        uniqueKeysWithValues: supported.map { ($0.lowercased(), $0) }
    )

    /// `de-AT` → `de`, `en-GB` → `en-GB`, `pt-BR` → `pt-BR`, `es-MX` → `es-419`, `zh-Hant-TW` → `zh-TW`,
    /// `no` → `nb`, `cy` → `auto`.
    public static func forLanguage(_ language: String) -> String {
        let subtags = language.replacingUnderscores().lowercased().split(separator: "-").map(String.init)
        guard let base = subtags.first, !base.isEmpty else { return "auto" }
        let region = subtags.dropFirst().first { $0.count == 2 || $0.count == 3 && $0.allSatisfy(\.isNumber) }
        let script = subtags.dropFirst().first { $0.count == 4 }
        if let region, let match = byLowercased["\(base)-\(region)"] { return match }
        switch base {
        case "es" where region != nil && region != "es": return "es-419"
        case "zh" where script == "hant": return region == "hk" || region == "mo" ? "zh-HK" : "zh-TW"
        case "no", "nn": return "nb"
        case "tl": return "fil"
        case "hi": return "hi-IN"
        default: return byLowercased[base] ?? "auto"
        }
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String {
        String(map { $0 == "_" ? "-" : $0 })
    }
}
