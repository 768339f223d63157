import Testing

@testable import Payments

/// Rates by date (Apple's "exchangeRate": "the Bloomberg exchange rate from within 48 hours of the transaction date").
@Suite("ExchangeRateTable")
struct ExchangeRateTableTests {
    static let day: Int64 = 86_400_000

    static func at(_ date: String, hour: Int64 = 12) -> Int64 {
        (ExchangeRateTable.day(date) ?? 0) + hour * 3_600_000
    }

    static let som = ExchangeRateTable(entries: [
        "UZS": .init(
            reportingCurrency: "EUR",
            dated: [
                ExchangeRateTable.day("2026-11-20") ?? 0: "0.0000770",
                ExchangeRateTable.day("2026-11-30") ?? 0: "0.000079",
            ]
        ),
        "KWD": .init(reportingCurrency: "usd", undated: "3.2510"),
    ])

    @Test(arguments: [
        ("2026-11-30", "0.000079"),  // its own day
        ("2026-12-02", "0.000079"),  // two days after the newest rate: within 48 hours of its date
        ("2026-11-29", "0.000079"),  // the day before a rate, none before it within two days
        ("2026-11-21", "0.0000770"),  // the closest day before it
    ])
    func theRateOfTheTransactionsDateIsUsed(date: String, rate: String) {
        #expect(
            Self.som.rate(for: "uzs", at: Self.at(date)) == .rate(ExchangeRate(reportingCurrency: "EUR", rate: rate))
        )
    }

    @Test func aRateOlderThan48HoursIsNotUsed() {
        guard case .missing(let reason) = Self.som.rate(for: "UZS", at: Self.at("2026-12-03", hour: 1)) else {
            Issue.record("a rate three days old was used")
            return
        }
        #expect(reason.contains("on 2026-12-03"))
        #expect(reason.contains("the newest before it is for 2026-11-30"))
        #expect(reason.contains("within 48 hours"))
        guard case .missing(let early) = Self.som.rate(for: "UZS", at: Self.at("2026-11-10")) else {
            Issue.record("a rate ten days after the sale was used")
            return
        }
        #expect(early.contains("none is dated before it"))
        guard case .missing(let unknown) = Self.som.rate(for: "ISK", at: Self.at("2026-11-30")) else {
            Issue.record("a currency without rates had one")
            return
        }
        #expect(unknown.contains("no ISK rate"))
    }

    @Test func anUndatedRateServesEveryDate() {
        #expect(
            Self.som.rate(for: "KWD", at: 0) == .rate(ExchangeRate(reportingCurrency: "USD", rate: "3.2510"))
        )
    }

    @Test func aFileReplacesTheConfiguredCurrencies() {
        let file = ExchangeRateTable(entries: ["KWD": .init(reportingCurrency: "EUR", undated: "2.95")])
        let both = Self.som.overlaid(by: file)
        #expect(both.entries["KWD"]?.undated == "2.95")
        #expect(both.entries["UZS"] == Self.som.entries["UZS"])
    }

    @Test(arguments: [
        ("1970-01-01", Int64(0)), ("2026-11-30", Int64(1_795_996_800_000)), ("2024-02-29", Int64(1_709_164_800_000)),
        ("2000-03-01", Int64(951_868_800_000)),
    ])
    func datesAreUTCDays(text: String, start: Int64) {
        #expect(ExchangeRateTable.day(text) == start)
        #expect(ExchangeRateTable.dayText(start) == text)
        #expect(ExchangeRateTable.dayText(start + Self.day - 1) == text)
        #expect(ExchangeRateTable.dayStart(of: start + 5_000) == start)
    }

    @Test(arguments: [
        "2026-02-29", "2026-13-01", "2026-00-10", "26-11-30", "2026-11-3", "2026/11/30", "2026-11-31", "",
    ])
    func onlyRealDatesAreDays(text: String) {
        #expect(ExchangeRateTable.day(text) == nil)
    }
}
