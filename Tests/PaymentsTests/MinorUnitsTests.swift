import Testing

@testable import Payments

/// Decimal text → minor units for any provider; only Stripe's own limits stay with `StripeAmount`.
@Suite("MinorUnits")
struct MinorUnitsTests {
    @Test func exactInTheCurrencysExponent() throws {
        #expect(try MinorUnits.parse("29.99", currency: "eur") == 2999)
        #expect(try MinorUnits.parse("500.00", currency: "JPY") == 500)
        #expect(try MinorUnits.parse("5.12", currency: "KWD") == 5120)
        #expect(throws: MinorUnitsError.tooPrecise("1.5", currency: "JPY", decimals: 0)) {
            try MinorUnits.parse("1.5", currency: "JPY")
        }
        #expect(throws: MinorUnitsError.notADecimal("-1")) { try MinorUnits.parse("-1", currency: "EUR") }
        #expect(throws: MinorUnitsError.notACurrency("EURO")) { try MinorUnits.parse("1", currency: "EURO") }
    }

    /// Stripe's 8 digits, its three-decimal last 0 and its whole krónur are Stripe's, not every provider's.
    @Test func stripesOwnLimitsAreNotApplied() throws {
        #expect(try MinorUnits.parse("1000000.00", currency: "EUR") == 100_000_000)
        #expect(try MinorUnits.parse("5.124", currency: "KWD") == 5124)
        #expect(try MinorUnits.parse("5.50", currency: "ISK") == 550)
    }

    /// A bound far beyond any price keeps milli-units and sums inside Int64.
    @Test func refusesMoreThanTwelveDigits() throws {
        #expect(try MinorUnits.parse("999999999999", currency: "JPY") == 999_999_999_999)
        #expect(throws: MinorUnitsError.tooLarge("1000000000000", currency: "JPY")) {
            try MinorUnits.parse("1000000000000", currency: "JPY")
        }
    }
}
