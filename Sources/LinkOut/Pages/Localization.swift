import Foundation

/// Page texts by language, from `Public/locales/<language>.json` (flat key → text maps). English is required
/// and is the fallback for any key another language lacks.
struct Localization: Sendable {
    let languages: [String: [String: String]]

    static func load(from directory: String) throws(ConfigurationError) -> Localization {
        var languages: [String: [String: String]] = [:]
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for file in files.sorted() where file.hasSuffix(".json") {
            let path = (directory as NSString).appendingPathComponent(file)
            guard let data = FileManager.default.contents(atPath: path),
                let texts = try? JSONDecoder().decode([String: String].self, from: data)
            else { throw ConfigurationError(field: path, problem: "must be a JSON object of strings") }
            languages[String(file.dropLast(5))] = texts
        }
        guard languages["en"] != nil else {
            throw ConfigurationError(
                field: (directory as NSString).appendingPathComponent("en.json"),
                problem: "is missing"
            )
        }
        return Localization(languages: languages)
    }

    /// The best language for an `Accept-Language` header (RFC 9110 §12.5.4: highest q first), or English.
    func language(acceptLanguage: String?) -> String {
        for (tag, _) in Self.preferences(acceptLanguage) {
            let primary = String(tag.split(separator: "-").first ?? "")
            if languages[primary] != nil { return primary }
        }
        return "en"
    }

    /// Every text of `language` with English filling gaps, as template values named `t_<key>`.
    func texts(_ language: String) -> Template.Context {
        var context: Template.Context = [:]
        for (key, text) in languages["en"] ?? [:] { context["t_" + key] = .text(text) }
        for (key, text) in languages[language] ?? [:] { context["t_" + key] = .text(text) }
        return context
    }

    func text(_ key: String, language: String) -> String {
        languages[language]?[key] ?? languages["en"]?[key] ?? key
    }

    /// The text of `key` with each `{name}` replaced by `values[name]`: word order differs between languages
    /// ("Pay €29.99", "29,99 € bezahlen"), so amounts and names go where each language puts them.
    func text(_ key: String, language: String, _ values: [String: String]) -> String {
        var text = text(key, language: language)
        for (name, value) in values { text = text.replacingOccurrences(of: "{" + name + "}", with: value) }
        return text
    }

    /// Language tags with their weights, highest first; `*` and malformed entries skipped.
    static func preferences(_ header: String?) -> [(tag: String, weight: Double)] {
        guard let header else { return [] }
        var result: [(tag: String, weight: Double, order: Int)] = []
        for (order, item) in header.split(separator: ",").enumerated() {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first?.lowercased(), !tag.isEmpty, tag != "*" else { continue }
            var weight = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                weight = Double(parameter.dropFirst(2)) ?? 0
            }
            if weight > 0 { result.append((tag, weight, order)) }
        }
        return result.sorted { $0.weight != $1.weight ? $0.weight > $1.weight : $0.order < $1.order }
            .map { ($0.tag, $0.weight) }
    }

    /// The currency of the first region named in `Accept-Language` (`de-AT` → EUR, `en-GB` → GBP), if known.
    static func currency(acceptLanguage: String?) -> String? {
        for (tag, _) in preferences(acceptLanguage) {
            let parts = tag.split(separator: "-")
            if parts.count >= 2, let region = parts.last, let currency = regionCurrencies[region.uppercased()] {
                return currency
            }
            if parts.count == 1, let currency = languageCurrencies[String(parts[0])] { return currency }
        }
        return nil
    }

    static let regionCurrencies: [String: String] = {
        var map = [
            "US": "USD", "GB": "GBP", "CH": "CHF", "SE": "SEK", "NO": "NOK", "DK": "DKK", "PL": "PLN",
            "CZ": "CZK", "HU": "HUF", "RO": "RON", "BG": "BGN", "IS": "ISK", "JP": "JPY", "CA": "CAD", "AU": "AUD",
            "KR": "KRW", "BR": "BRL",
        ]
        for region in [
            "AT", "BE", "CY", "DE", "EE", "ES", "FI", "FR", "GR", "HR", "IE", "IT", "LT", "LU", "LV", "MT",
            "NL", "PT", "SI", "SK",
        ] {
            map[region] = "EUR"
        }
        return map
    }()

    /// For a bare language tag, the currency most of its speakers in Apple's link-out regions use.
    static let languageCurrencies = [
        "de": "EUR", "fr": "EUR", "it": "EUR", "es": "EUR", "nl": "EUR", "pt": "EUR", "pl": "PLN", "sv": "SEK",
        "ja": "JPY", "ko": "KRW",
    ]
}
