import Domain
import Foundation
import Storage
import Testing

/// How long a change of `commission.regimes` holds start-up: every line item is classified again and the roll-up
/// rebuilt in one transaction (`MoneyStore.useRegimes`). Off in normal test runs; on with
/// `LINKOUT_BENCH_REBUILD_LINE_ITEMS=100000 swift test --filter MoneyRegimesRebuildBenchmark` (SQLite).
@Suite("Money regimes rebuild benchmark")
struct MoneyRegimesRebuildBenchmark {
    static let count = ProcessInfo.processInfo.environment["LINKOUT_BENCH_REBUILD_LINE_ITEMS"].flatMap { Int($0) }

    static func milliseconds(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
    }

    @Test(.enabled(if: count != nil)) func aRegimeChangeRebuildsEveryLineItem() throws {
        let total = try #require(Self.count)
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try MoneyLedgerTests.open(folder)
        defer { ledger.close() }
        // Stored through the write path, a thousand line items to a token and a transaction.
        let batch = 1_000
        let fill = try Self.milliseconds {
            for first in stride(from: 0, to: total, by: batch) {
                let token = "bench-\(first / batch)"
                _ = try ledger.tokens.recordForwardedToken(
                    LedgerTests.token(token, source: .app),
                    checkoutId: "c-\(token)",
                    at: MoneyLedgerTests.at
                )
                let items = (first..<min(first + batch, total)).map { index in
                    (LineItemID("b\(index)"), MoneyLedgerTests.buy("b\(index)", inclusive: 11900, tax: 1900))
                }
                try ledger.reports.storeLineItems(items, for: ExternalPurchaseID(token), at: MoneyLedgerTests.at)
            }
        }
        var rebuilt = false
        let rebuild = try Self.milliseconds { rebuilt = try ledger.money.useRegimes([MoneyLedgerTests.regime]) }
        #expect(rebuilt)
        let totals = try ledger.money.totals(fromDay: MoneyLedgerTests.day, untilDay: MoneyLedgerTests.day + 1)
        #expect(totals.map(\.sales) == [Int64(total)])
        print("BENCH money-rebuild sqlite \(total): fill through the write path: \(Int(fill)) ms")
        print("BENCH money-rebuild sqlite \(total): useRegimes rebuild: \(Int(rebuild)) ms")
    }
}
