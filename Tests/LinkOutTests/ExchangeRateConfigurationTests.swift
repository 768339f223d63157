import Foundation
import Payments
import Testing

@testable import LinkOut

/// `payments.exchangeRates` by date, and `payments.exchangeRatesFile`: every mistake names its field.
@Suite("Exchange rate configuration")
struct ExchangeRateConfigurationTests {
    func failure(_ json: String) -> ConfigurationError? {
        do {
            _ = try Configuration.parse(Data(json.utf8))
            return nil
        } catch {
            return error
        }
    }

    @Test func datedAndUndatedRatesAreRead() throws {
        let configuration = try Configuration.parse(
            Data(
                #"{"payments": {"exchangeRates": {"UZS": {"reportingCurrency": "EUR", "rates": {"2026-11-30": "0.000079", "2026-12-01": "0.0000791"}}, "kwd": {"reportingCurrency": "USD", "rate": "3.2510"}}}}"#
                    .utf8
            )
        )
        let rates = configuration.payments.exchangeRates
        #expect(rates.entries["UZS"]?.dated[ExchangeRateTable.day("2026-12-01") ?? 0] == "0.0000791")
        #expect(rates.entries["KWD"]?.undated == "3.2510")
    }

    @Test(arguments: [
        (
            #"{"UZS": {"reportingCurrency": "EUR", "rates": {"2026-11-31": "0.000079"}}}"#,
            "payments.exchangeRates.UZS.rates.2026-11-31"
        ),
        (
            #"{"UZS": {"reportingCurrency": "EUR", "rates": {"2026-11-30": 0.000079}}}"#,
            "payments.exchangeRates.UZS.rates.2026-11-30"
        ),
        (
            #"{"UZS": {"reportingCurrency": "EUR", "rates": {"2026-11-30": "7.9e-05"}}}"#,
            "payments.exchangeRates.UZS.rates.2026-11-30"
        ),
        (#"{"UZS": {"reportingCurrency": "EUR", "rate": "-1"}}"#, "payments.exchangeRates.UZS.rate"),
        (
            #"{"UZS": {"reportingCurrency": "EUR", "rate": "1", "rates": {"2026-11-30": "1"}}}"#,
            "payments.exchangeRates.UZS"
        ),
        (#"{"UZS": {"reportingCurrency": "EUR"}}"#, "payments.exchangeRates.UZS"),
        (#"{"UZS": {"reportingCurrency": "GBP", "rate": "1"}}"#, "payments.exchangeRates.UZS"),
        (#"{"UZS": {"reportingCurrency": "EUR", "rate": "1", "source": "x"}}"#, "payments.exchangeRates.UZS.source"),
    ])
    func mistakesNameTheirField(rates: String, field: String) {
        #expect(failure(#"{"payments": {"exchangeRates": \#(rates)}}"#)?.field == field)
    }

    /// An empty list of dated rates was told it had both kinds.
    @Test func anEmptyListOfDatedRatesIsToldItNeedsOne() {
        let empty = failure(#"{"payments": {"exchangeRates": {"UZS": {"reportingCurrency": "EUR", "rates": {}}}}}"#)
        #expect(empty?.field == "payments.exchangeRates.UZS")
        #expect(empty?.problem.contains("at least one") == true)
        #expect(empty?.problem.contains("not both") == false)
    }

    @Test func aRatesFileIsReadAndItsMistakesNamed() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-rates-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"UZS": {"reportingCurrency": "EUR", "rates": {"2026-11-30": "0.000079"}}}"#.utf8).write(to: file)
        let catalog =
            #""catalog": [{"id": "p", "name": {"en": "P"}, "price": {"UZS": "120000"}}]"#
        let configuration = try Configuration.parse(
            Data(#"{"payments": {"exchangeRatesFile": "\#(file.path)"}, \#(catalog)}"#.utf8)
        )
        #expect(configuration.payments.exchangeRatesFile == file.path)
        #expect(
            try Configuration.Payments.ratesFile(file.path).entries["UZS"]?.dated.values.first == "0.000079"
        )
        // A product priced in a currency neither the configuration nor the file has a rate for.
        try Data(#"{"KWD": {"reportingCurrency": "EUR", "rate": "2.95"}}"#.utf8).write(to: file)
        #expect(
            failure(#"{"payments": {"exchangeRatesFile": "\#(file.path)"}, \#(catalog)}"#)?.field
                == "catalog[0].price.UZS"
        )
        try Data(#"{"UZS": {"reportingCurrency": "EUR", "rates": {"30.11.2026": "0.000079"}}}"#.utf8).write(to: file)
        #expect(
            failure(#"{"payments": {"exchangeRatesFile": "\#(file.path)"}}"#)?.field
                == "payments.exchangeRatesFile.UZS.rates.30.11.2026"
        )
        #expect(
            failure(#"{"payments": {"exchangeRatesFile": "\#(file.path).missing"}}"#)?.field
                == "payments.exchangeRatesFile"
        )
    }
}
