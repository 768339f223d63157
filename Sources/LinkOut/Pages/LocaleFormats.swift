import Domain
import Foundation
import Synchronization

/// Prices and dates as a person reads them in a page language (`29,99 €` in German, `€29.99` in English,
/// `30. November 2026`), from Foundation's ICU formatters.
///
/// A formatter costs about a third of a millisecond to build and is not safe to share between threads, while the
/// checkout page is hot and shows the same few catalog prices over and over: so finished texts are cached, and a
/// formatter is only built (under the lock) on a miss.
final class LocaleFormats: Sendable {
    static let shared = LocaleFormats()

    /// The locale whose conventions a page language follows. Portuguese follows Brazil, the storefront Apple names for
    /// link-outs (docs/apple-facts.md, "Storefronts and commission"); Portugal writes the same digits, only the symbol
    /// moves.
    static let locales = [
        "en": "en_US", "de": "de_DE", "fr": "fr_FR", "es": "es_ES", "it": "it_IT", "nl": "nl_NL", "pl": "pl_PL",
        "pt": "pt_BR", "sv": "sv_SE", "ja": "ja_JP", "ko": "ko_KR",
    ]

    /// Enough for every catalog price in every language and currency many times over; a cache that somehow grew
    /// past it (amounts are bounded by the catalog, but not by type) starts again rather than growing forever.
    private static let maxEntries = 4096

    private struct State {
        var texts: [String: String] = [:]
    }

    private let state = Mutex(State())

    /// `amount` in `language`'s notation: symbol placement, separators and the currency's own decimals.
    func price(_ amount: Money, language: String) -> String {
        let key = language + "|" + amount.currency.rawValue + "|" + String(amount.minorUnits)
        return cached(key) {
            let formatter = NumberFormatter()
            formatter.locale = Locale(identifier: Self.locales[language] ?? "en_US")
            formatter.numberStyle = .currency
            formatter.currencyCode = amount.currency.rawValue
            formatter.minimumFractionDigits = amount.displayDigits
            formatter.maximumFractionDigits = amount.displayDigits
            // Exact decimal from the integer minor units: never a binary floating-point amount.
            let number = NSDecimalNumber(
                mantissa: amount.minorUnits.magnitude,
                exponent: Int16(-amount.fractionDigits),
                isNegative: amount.minorUnits < 0
            )
            return formatter.string(from: number) ?? amount.currency.rawValue + " " + amount.decimalText
        }
    }

    /// The calendar day of `milliseconds` (UTC) in `language`'s long form, e.g. `1 December 2026`.
    func day(_ milliseconds: Int64, language: String) -> String {
        let day = milliseconds / Milliseconds.day
        return cached(language + "|day|" + String(day)) {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: Self.locales[language] ?? "en_US")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateStyle = .long
            formatter.timeStyle = .none
            return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(day * 86_400)))
        }
    }

    private func cached(_ key: String, _ make: () -> String) -> String {
        state.withLock { state in
            if let text = state.texts[key] { return text }
            let text = make()
            if state.texts.count >= Self.maxEntries { state.texts.removeAll(keepingCapacity: true) }
            state.texts[key] = text
            return text
        }
    }
}
