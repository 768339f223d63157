import Domain
import ExternalPurchase
import Foundation
import Payments
import Testing

@testable import LinkOut

/// The shipped locale files and the formats of prices and dates in each page language.
@Suite("Localization")
struct LocalizationTests {
    static let publicDir = LiveApplication.repositoryRoot.appendingPathComponent("Public")

    static func load() throws -> Localization {
        try Localization.load(from: publicDir.appendingPathComponent("locales").path)
    }

    /// The languages of the storefronts where link-outs are allowed (docs/apple-facts.md, "Storefronts and
    /// commission").
    static let shipped = ["de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "sv"]

    @Test func everyStorefrontLanguageShips() throws {
        #expect(try Self.load().languages.keys.sorted() == Self.shipped)
    }

    @Test(arguments: shipped)
    func everyLocaleHasExactlyEnglishsKeysAndPlaceholders(language: String) throws {
        let localization = try Self.load()
        let english = try #require(localization.languages["en"])
        let texts = try #require(localization.languages[language])
        #expect(Set(english.keys).subtracting(texts.keys).sorted() == [], "missing in \(language).json")
        #expect(Set(texts.keys).subtracting(english.keys).sorted() == [], "unknown keys in \(language).json")
        for (key, text) in english {
            let translated = texts[key] ?? ""
            #expect(!translated.isEmpty, "\(language).\(key) is empty")
            // A translation that drops {price} would show a pay button without the amount.
            #expect(Self.placeholders(translated) == Self.placeholders(text), "\(language).\(key)")
        }
    }

    @Test func everyTemplateTextAndRejectionReasonHasAnEnglishText() throws {
        let english = try #require(try Self.load().languages["en"])
        let templates = Self.publicDir.appendingPathComponent("templates")
        // Partials (in `partials/`) included.
        for file in try FileManager.default.subpathsOfDirectory(atPath: templates.path) where file.hasSuffix(".html") {
            let text = try String(contentsOf: templates.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: /\{\{\s*t_([a-z_]+)\s*\}\}/) {
                #expect(english[String(match.1)] != nil, "\(file) uses t_\(match.1)")
            }
        }
        for code in TokenRejection.allCodes {
            #expect(english["reason_" + code] != nil, "reason_\(code)")
        }
    }

    @Test func placeholdersAreFilledWhereEachLanguagePutsThem() throws {
        let localization = try Self.load()
        #expect(localization.text("open_app", language: "en", ["app": "Notes"]) == "Open Notes")
        #expect(localization.text("open_app", language: "de", ["app": "Notes"]) == "Notes öffnen")
        #expect(localization.text("open_app", language: "ja", ["app": "Notes"]) == "Notesを開く")
        // A language without the file falls back to English.
        #expect(localization.text("open_app", language: "xx", ["app": "Notes"]) == "Open Notes")
    }

    @Test func pricesFollowThePageLanguage() throws {
        let euros = try #require(Money(currency: "EUR", decimal: "29.99"))
        #expect(euros.formatted(language: "en") == "€29.99")
        #expect(euros.formatted(language: "de") == "29,99\u{A0}€")
        #expect(euros.formatted(language: "fr") == "29,99\u{A0}€")
        #expect(euros.formatted(language: "nl") == "€\u{A0}29,99")
        #expect(euros.formatted(language: "ja") == "€29.99")
        let yen = try #require(Money(currency: "JPY", decimal: "480"))
        #expect(yen.formatted(language: "ja") == "¥480")
        let won = try #require(Money(currency: "KRW", decimal: "4900"))
        #expect(won.formatted(language: "ko") == "₩4,900")
        let dollars = try #require(Money(currency: "USD", decimal: "1234.5"))
        #expect(dollars.formatted(language: "en") == "$1,234.50")
        // Asked again, the same text (from the cache).
        #expect(euros.formatted(language: "de") == "29,99\u{A0}€")
    }

    /// One table of exponents for every amount: the catalog's prices, the providers' minor units, the token
    /// page's purchases and the money pages' milli-units agree for every currency. Before, the pages had a table
    /// of their own (ISK, HUF and TWD in whole units), so a Stripe charge of ISK 500.00 (`50000`) showed as
    /// "50000 ISK".
    @Test func everyPageReadsAmountsThroughTheOneTable() throws {
        for (currency, text, minor, shown) in [
            ("ISK", "500", Int64(50_000), "500.00"), ("HUF", "2990", 299_000, "2990.00"),
            ("TWD", "150", 15_000, "150.00"), ("JPY", "480", 480, "480"), ("KWD", "5.12", 5_120, "5.120"),
            ("EUR", "29.99", 2_999, "29.99"), ("MGA", "1000", 1_000, "1000"),
        ] {
            let money = try #require(Money(currency: CurrencyCode(currency), decimal: text), "\(currency)")
            #expect(money.minorUnits == minor, "\(currency)")
            #expect(try MinorUnits.parse(text, currency: currency) == minor, "\(currency)")
            let read = currency == "ISK" ? "500" : shown
            #expect(DashboardRoute.amount(minor, currency: CurrencyCode(currency)) == "\(read) \(currency)")
            #expect(money.decimalText == shown, "\(currency)")
            let milli = CurrencyExponent.milliUnits(minor, currency: currency)
            #expect(MilliUnitsText.text(milli, currency: CurrencyCode(currency)) == shown, "\(currency)")
        }
        // A person reads krónur whole, and sees øre only where there are some.
        #expect(try #require(Money(currency: "ISK", decimal: "500")).formatted(language: "en") == "ISK\u{A0}500")
        #expect(try #require(Money(currency: "ISK", decimal: "500.50")).formatted(language: "en") == "ISK\u{A0}500.50")
    }

    @Test func formattingFromManyThreadsAtOnceAgrees() async throws {
        let euros = try #require(Money(currency: "EUR", decimal: "3.99"))
        let results = await withTaskGroup(of: String.self) { group in
            for index in 0..<200 {
                group.addTask { euros.formatted(language: index % 2 == 0 ? "de" : "sv") }
            }
            var all: [String] = []
            for await text in group { all.append(text) }
            return all
        }
        #expect(Set(results) == ["3,99\u{A0}€"])
    }

    @Test func subscriptionPricesKeepTheirPeriod() throws {
        let pages = try Pages.load(publicDir: Self.publicDir.path, isSecure: false, apps: [])
        let amount = try #require(Money(currency: "EUR", decimal: "3.99"))
        #expect(pages.price(amount, interval: BillingInterval(.month), language: "en") == "€3.99/month")
        #expect(pages.price(amount, interval: BillingInterval(.month), language: "de") == "3,99\u{A0}€/Monat")
        #expect(
            pages.price(amount, interval: BillingInterval(.month, count: 3), language: "en") == "€3.99 every 3 months"
        )
        #expect(pages.price(amount, interval: nil, language: "en") == "€3.99")
    }

    @Test func chargeDatesAreWrittenInThePageLanguage() {
        // 2026-12-01 12:00 UTC.
        let noon: Int64 = 1_796_126_400_000
        #expect(LocaleFormats.shared.day(noon, language: "en") == "December 1, 2026")
        #expect(LocaleFormats.shared.day(noon, language: "de") == "1. Dezember 2026")
        #expect(LocaleFormats.shared.day(noon, language: "ja") == "2026年12月1日")
    }

    static func placeholders(_ text: String) -> Set<String> {
        Set(text.matches(of: /\{[a-z]+\}/).map { String($0.0) })
    }
}
