import Domain
import Foundation
import LedgerSeeding
import Lifecycle
import Storage
import TestSupport
import Testing

@testable import LinkOut
@testable import Storage

/// The money views at millions of line items: the ledger is filled in bulk (`Ledger.seedMoney`, in
/// `LedgerSeeding`), then the reads the revenue API, the dashboard, the monthly close and the export make are
/// timed, and the write path (storing a line item with its money row and roll-up change) at that size. Off in
/// normal test runs; `bench/money.sh` turns it on with `LINKOUT_BENCH_LINE_ITEMS` (on PostgreSQL with
/// `LINKOUT_TEST_POSTGRES_URL`).
@Suite("Money benchmark")
struct MoneyBenchmark {
    static let count = ProcessInfo.processInfo.environment["LINKOUT_BENCH_LINE_ITEMS"].flatMap { Int64($0) }

    static func time<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try body()
        return (result, Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
    }

    @Test(.enabled(if: count != nil)) func readsAtMillionsOfLineItems() throws {
        let total = try #require(Self.count)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-money-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ledger =
            try TestDatabase.postgresURL(for: folder).map { url in
                // The bulk fill's statements take longer than a request may.
                var target = PostgresTarget(url: url, password: nil)
                target.statementTimeoutMilliseconds = 600_000
                return try Ledger(postgres: target)
            }
            ?? Ledger(directory: folder)
        defer { ledger.close() }
        let engine = TestDatabase.postgresURL == nil ? "sqlite" : "postgres"
        let today = Clock.system.nowMilliseconds() / Milliseconds.day
        let firstDay = today - 364
        let (_, fill) = try Self.time {
            try ledger.seedMoney(first: 0, count: total, firstDay: firstDay, days: 365)
        }
        var results: [(String, Double)] = [("fill \(total) line items", fill)]
        let (_, revenue30) = try Self.time {
            RevenueReport(
                days: try ledger.money.days(fromDay: today - 29, untilDay: today + 1),
                firstDay: today - 29,
                lastDay: today,
                by: .day,
                regimes: []
            ).rows.count
        }
        results.append(("revenue, 30 days by day", revenue30))
        let (_, revenue365) = try Self.time {
            RevenueReport(
                days: try ledger.money.days(fromDay: firstDay, untilDay: today + 1),
                firstDay: firstDay,
                lastDay: today,
                by: .month,
                regimes: []
            ).csv.count
        }
        results.append(("revenue, 365 days by month (CSV)", revenue365))
        let month = DashboardRoute.monthsBack(1, from: today)
        let next = UTCDate.nextMonth(days: month)
        let (_, totals) = try Self.time {
            (
                try ledger.money.totals(fromDay: month, untilDay: next).count,
                try ledger.money.acceptance(from: Milliseconds.days(month), until: Milliseconds.days(next))
            )
        }
        results.append(("a month's totals and acceptance", totals))
        let (read, readTime) = try Self.time {
            try ledger.money.lineItems(
                from: Milliseconds.days(month),
                until: Milliseconds.days(next),
                limit: Int(Int32.max)
            ).count
        }
        results.append(("read a month's \(read) line items in one query", readTime))
        var bytes = 0
        let (_, export) = try Self.time {
            try LineItemsCSV.export(ledger, from: Milliseconds.days(month), until: Milliseconds.days(next)) {
                bytes += $0.utf8.count
            }
        }
        results.append(("export of a month (\(bytes / 1_000_000) MB)", export))
        // The write path at this size: a line item stored with its money row and roll-up change.
        let token = ExternalPurchaseToken(
            appAppleId: 1_234_567_890,
            bundleId: "com.example",
            tokenCreationDate: Milliseconds.days(today - 1),
            externalPurchaseId: "bench-w"
        )
        _ = try ledger.tokens.recordForwardedToken(TokenFields(token, source: .app), checkoutId: "c", at: 1)
        let (_, writes) = try Self.time {
            for index in 0..<200 {
                let body = """
                    {"lineItemId": "w\(index)", "creationDate": \(Milliseconds.days(today)), "eventType": "BUY",
                     "productType": "ONE_TIME_BUY", "productIdentifier": "pro", "quantity": 1,
                     "amountTaxInclusive": 29990, "amountTaxExclusive": 25200, "taxAmount": 4790,
                     "netAmountTaxExclusive": 25200, "pricingCurrency": "EUR", "reportingCurrency": "EUR",
                     "taxCountry": "DEU"}
                    """
                try ledger.reports.storeLineItems([("w\(index)", body)], for: "bench-w", at: Milliseconds.days(today))
            }
        }
        results.append(("store one line item (mean of 200)", writes / 200))
        for (name, milliseconds) in results {
            print("BENCH money \(engine) \(total): \(name): \(String(format: "%.1f", milliseconds)) ms")
        }
    }
}
