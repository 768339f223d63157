import Domain
import Foundation
import Logging
import Payments
import Synchronization
import Testing

@testable import LinkOut

/// The operator's rates file is read again when it changes; a broken one leaves the last good rates in force.
@Suite("Exchange rate source")
struct ExchangeRateSourceTests {
    @Test func aChangedFileIsReadAgainAndABrokenOneIgnored() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-rates-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "test", level: .trace, sink: .init { line in lines.withLock { $0.append(line) } })
        let configured = ExchangeRateTable(entries: [
            "KWD": .init(reportingCurrency: "USD", undated: "3.25"),
            "UZS": .init(reportingCurrency: "EUR", undated: "0.00008"),
        ])
        let sale = ExchangeRateTable.day("2026-11-30") ?? 0
        try Data(#"{"UZS": {"reportingCurrency": "EUR", "rates": {"2026-11-30": "0.000079"}}}"#.utf8).write(to: file)
        let source = ExchangeRateSource(configured: configured, file: file.path, logger: logger)
        #expect(source.rate(for: "UZS", at: sale) == .rate(ExchangeRate(reportingCurrency: "EUR", rate: "0.000079")))
        // The configuration's other currencies stay.
        #expect(source.rate(for: "KWD", at: sale) == .rate(ExchangeRate(reportingCurrency: "USD", rate: "3.25")))

        try Data(#"{"UZS": {"reportingCurrency": "EUR", "rates": {"2026-11-30": "0.0000795"}}}"#.utf8).write(to: file)
        #expect(source.rate(for: "UZS", at: sale) == .rate(ExchangeRate(reportingCurrency: "EUR", rate: "0.0000795")))

        try Data(#"{"UZS": {"reportingCurrency": "EUR", "rates": {"2026-11-30": 0.00008}}}"#.utf8).write(to: file)
        #expect(source.rate(for: "UZS", at: sale) == .rate(ExchangeRate(reportingCurrency: "EUR", rate: "0.0000795")))
        #expect(
            lines.withLock { $0 }.contains {
                $0.contains("exchange rates file not used")
                    && $0.contains("payments.exchangeRatesFile.UZS.rates.2026-11-30")
            }
        )
    }
}
