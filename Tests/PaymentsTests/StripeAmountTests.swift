import Testing

@testable import Payments

/// Decimal text → Stripe minor units → Apple milli-units (Stripe: "Supported currencies"; Apple: "Line item fields").
@Suite("StripeAmount")
struct StripeAmountTests {
    @Test func euroHasTwoDecimals() throws {
        #expect(try StripeAmount.minorUnits("29.99", currency: "EUR") == 2999)
        #expect(try StripeAmount.minorUnits("2.99", currency: "eur") == 299)
        #expect(try StripeAmount.minorUnits("10", currency: "USD") == 1000)
        #expect(try StripeAmount.minorUnits("0.5", currency: "EUR") == 50)
        #expect(try StripeAmount.minorUnits("29.990", currency: "EUR") == 2999)
        #expect(MinorUnits.milliUnits(299, currency: "EUR") == 2990)
        #expect(MinorUnits.milliUnits(2999, currency: "eur") == 29990)
    }

    @Test func yenIsZeroDecimal() throws {
        #expect(try StripeAmount.minorUnits("500", currency: "JPY") == 500)
        #expect(try StripeAmount.minorUnits("500.00", currency: "JPY") == 500)
        #expect(throws: StripeAmountError.tooPrecise("1.5", currency: "JPY", decimals: 0)) {
            try StripeAmount.minorUnits("1.5", currency: "JPY")
        }
        #expect(MinorUnits.milliUnits(500, currency: "JPY") == 500_000)
    }

    @Test func kuwaitiDinarHasThreeDecimalsEndingInZero() throws {
        #expect(try StripeAmount.minorUnits("5.120", currency: "KWD") == 5120)
        #expect(try StripeAmount.minorUnits("5.12", currency: "KWD") == 5120)
        #expect(throws: StripeAmountError.notChargeable("5.124", currency: "KWD")) {
            try StripeAmount.minorUnits("5.124", currency: "KWD")
        }
        #expect(MinorUnits.milliUnits(5120, currency: "KWD") == 5120)
    }

    @Test func icelandicKronaIsTwoDecimalInWholeUnits() throws {
        #expect(MinorUnits.exponent(of: "ISK") == 2)
        #expect(try StripeAmount.minorUnits("5", currency: "ISK") == 500)
        #expect(throws: StripeAmountError.notChargeable("5.50", currency: "ISK")) {
            try StripeAmount.minorUnits("5.50", currency: "ISK")
        }
        #expect(MinorUnits.milliUnits(500, currency: "ISK") == 5000)
        #expect(MinorUnits.exponent(of: "HUF") == 2)
    }

    @Test(arguments: ["", ".", "1.", "-1", "+1", "1e3", "1,00", " 1", "1.2.3", "abc", "٣"])
    func refusesWhatIsNotPlainDecimalText(_ text: String) {
        #expect(throws: StripeAmountError.notADecimal(text)) { try StripeAmount.minorUnits(text, currency: "EUR") }
    }

    @Test func refusesMoreThanEightDigitsAndBadCodes() {
        #expect(throws: StripeAmountError.tooLarge("1000000.00", currency: "EUR")) {
            try StripeAmount.minorUnits("1000000.00", currency: "EUR")
        }
        #expect(throws: StripeAmountError.tooLarge("99999999999999999999999", currency: "JPY")) {
            try StripeAmount.minorUnits("99999999999999999999999", currency: "JPY")
        }
        #expect((try? StripeAmount.minorUnits("999999.99", currency: "EUR")) == 99_999_999)
        #expect(throws: StripeAmountError.notACurrency("EURO")) { try StripeAmount.minorUnits("1", currency: "EURO") }
    }

    @Test func leadingZerosAndZero() throws {
        #expect(try StripeAmount.minorUnits("0", currency: "EUR") == 0)
        #expect(try StripeAmount.minorUnits("007.50", currency: "EUR") == 750)
        #expect(try StripeAmount.minorUnits(".50", currency: "EUR") == 50)
    }

    @Test func decimalTextRoundTrips() {
        #expect(MinorUnits.decimalText(2999, currency: "EUR") == "29.99")
        #expect(MinorUnits.decimalText(5, currency: "EUR") == "0.05")
        #expect(MinorUnits.decimalText(500, currency: "JPY") == "500")
        #expect(MinorUnits.decimalText(5120, currency: "KWD") == "5.120")
        #expect(MinorUnits.decimalText(-250, currency: "EUR") == "-2.50")
    }
}
