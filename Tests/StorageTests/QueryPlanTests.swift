import Domain
import Foundation
import TestSupport
import Testing

@testable import Storage

/// The hot reads of the background passes, the dashboard and the metrics go through indexes: a ledger of ten
/// million tokens costs them what they show or what is due, not what is stored. SQLite's plan is checked (it
/// does not depend on the table's size, unlike PostgreSQL's, which prefers a scan of a small table).
@Suite("Query plans", .enabled(if: TestDatabase.postgresURL == nil))
struct QueryPlanTests {
    /// SQLite's `EXPLAIN QUERY PLAN` lines for `sql` run with `parameters`.
    static func plan(_ ledger: Ledger, _ sql: String, _ parameters: [SQLValue]) throws -> [String] {
        try ledger.database.readers.read { connection throws(StorageError) in
            try connection.query("EXPLAIN QUERY PLAN " + sql, parameters).compactMap { $0.last?.text }
        }
    }

    /// Lines that read a whole table, or a whole index other than the partial ones named in `allowed`. A
    /// subquery's rows (`SCAN unreported`: a few, already read through indexes) are no table.
    static func fullScans(_ lines: [String], allowing allowed: [String] = []) -> [String] {
        let subqueries = [
            "unreported", "quiet", "announced", "custom_link", "at_expiry", "unknown_1", "unknown_2", "unknown_3",
            "unknown_4",
        ]
        return lines.filter { line in
            line.hasPrefix("SCAN") && !line.contains("CONSTANT ROW") && !subqueries.contains { line == "SCAN \($0)" }
                && !allowed.contains { line.contains("INDEX \($0)") }
        }
    }

    @Test func thePlannerReadsOnlyWhatMayBeDue() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let lines = try Self.plan(
            ledger,
            "SELECT \(TokenStore.tokenColumns) FROM tokens t \(ReportStore.needingReportsCondition)",
            Self.plannerParameters
        )
        // Both partial indexes read whole hold only what is due: line items no report carries, and tokens
        // Apple announced.
        #expect(
            Self.fullScans(lines, allowing: ["tokens_awaiting_announced", "line_items_unreported"]) == [],
            "\(lines)"
        )
        #expect(lines.contains { $0.contains("tokens_awaiting_quiet") }, "\(lines)")
        #expect(lines.contains { $0.contains("line_items_unreported") }, "\(lines)")
        // The duplicate check's refreshed-copy lookup, on the index of the types that can be duplicates.
        #expect(lines.contains { $0.contains("SEARCH s USING INDEX tokens_refresh") }, "\(lines)")
    }

    /// The planner's parameters: the duplicate window's range has text keys, the rest are integers.
    static let plannerParameters: [SQLValue] =
        [.integer(0), .integer(0), .integer(0), .text(""), .integer(0), .text("")]
        + Array(repeating: .integer(0), count: 6) + [.integer(100)]

    @Test func thePlannerReadsCustomLinkTokensByExpiryAndAWindow() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let lines = try Self.plan(
            ledger,
            "SELECT \(TokenStore.tokenColumns) FROM tokens t \(ReportStore.needingReportsCondition)",
            Self.plannerParameters
        )
        // Expired custom-link tokens: a range of their expiry up to now, not every custom-link token.
        #expect(
            lines.contains {
                $0.hasPrefix("SEARCH w USING INDEX tokens_awaiting_expiry (") && $0.contains("token_expires_at<?)")
            },
            "\(lines)"
        )
        // The duplicate check's window: a range of the key between two places.
        #expect(
            lines.contains {
                $0.contains("SEARCH w USING INDEX tokens_custom_link_order")
                    && $0.contains("(token_created_at,external_purchase_id)>(?,?)")
                    && $0.contains("(token_created_at,external_purchase_id)<(?,?)")
            },
            "\(lines)"
        )
        // No index that holds every custom-link token without a report is read whole.
        #expect(!lines.contains { $0.contains("tokens_awaiting_other") }, "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("SCAN") && $0.contains("tokens_custom_link_order") }, "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("SCAN") && $0.contains("tokens_awaiting_expiry") }, "\(lines)")
    }

    @Test func theDuplicateWindowIsReadAsARangeOfItsKey() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let lines = try Self.plan(ledger, ReportStore.customLinkKeysSQL, [.integer(0), .text(""), .integer(500)])
        #expect(Self.fullScans(lines) == [], "\(lines)")
        #expect(
            lines.contains {
                $0.hasPrefix("SEARCH w USING")
                    && $0.contains("tokens_custom_link_order ((token_created_at,external_purchase_id)>(?,?))")
            },
            "\(lines)"
        )
        #expect(!lines.contains { $0.contains("TEMP B-TREE") }, "\(lines)")
    }

    @Test func queuingATokensFirstReportTakesItOffTheWaitingIndexes() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        _ = try ledger.tokens.recordForwardedToken(LedgerTests.token("a"), checkoutId: "ca", at: 1)
        _ = try ledger.tokens.recordForwardedToken(LedgerTests.token("b"), checkoutId: "cb", at: 1)
        try ledger.reports.enqueueReport(LedgerDashboardTests.report("r1", for: "a"), lineItemRows: [])
        let waiting = try ledger.database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT external_purchase_id, report_queued_at FROM tokens ORDER BY external_purchase_id"
            ).map { [$0[0].text ?? "", $0[1].integer.map(String.init) ?? "none"] }
        }
        #expect(waiting == [["a", "1"], ["b", "none"]])
    }
}

extension QueryPlanTests {
    @Test func theOutboxGaugesAndTheFunnelReadOnlyWhatIsOpen() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let awaiting = [
            "tokens_awaiting_announced", "tokens_custom_link_order", "tokens_awaiting_quiet", "tokens_awaiting_expiry",
        ]
        for sql in [ReportStore.oldestUnreportedSQL, ReportStore.unknownStateSQL] {
            let lines = try Self.plan(ledger, sql, [])
            #expect(Self.fullScans(lines, allowing: awaiting) == [], "\(lines)")
            // A table searched without an index (a subquery's few rows aside).
            #expect(
                !lines.contains {
                    $0.hasPrefix("SEARCH t ") && !$0.contains("USING")
                        || $0.hasPrefix("SEARCH r ") && !$0.contains("USING")
                },
                "\(lines)"
            )
        }
        let oldest = try Self.plan(ledger, ReportStore.oldestUnreportedSQL, [])
        #expect(oldest.contains { $0.contains("tokens_unaccepted") }, "\(oldest)")
        #expect(oldest.contains { $0.contains("tokens_awaiting_expiry") }, "\(oldest)")
    }

    @Test func theTokenListPagesThroughAnIndex() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let lines = try Self.plan(
            ledger,
            "SELECT \(TokenStore.tokenColumns) FROM tokens ORDER BY first_seen_at, external_purchase_id LIMIT 51",
            []
        )
        #expect(Self.fullScans(lines, allowing: ["tokens_first_seen"]) == [], "\(lines)")
        #expect(!lines.contains { $0.contains("TEMP B-TREE") }, "\(lines)")
    }

    @Test func rollUpsCountWhatTheRowsSay() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let day = Milliseconds.day
        for (index, id) in ["a", "b", "c", "SANDBOX_d"].enumerated() {
            _ = try ledger.tokens.recordForwardedToken(
                LedgerTests.token(id),
                checkoutId: "c-\(id)",
                at: 3 * day + Int64(index)
            )
        }
        // A repeat sighting is no new token; a second intent on one checkout is no second checkout.
        _ = try ledger.tokens.recordForwardedToken(LedgerTests.token("a"), checkoutId: "c-a", at: 4 * day)
        for product in ["one", "two"] {
            _ = try ledger.tokens.recordCheckoutIntent(
                checkoutId: "c-a",
                productId: ProductID(product),
                currency: "EUR",
                amount: "1",
                at: 4 * day
            )
        }
        let rows = try ledger.database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT day, environment, source, tokens, checkouts, payments, reported FROM token_days ORDER BY 1, 2, 3"
            ).map { $0.map { $0.integer.map(String.init) ?? $0.text ?? "" } }
        }
        #expect(
            rows == [["3", "production", "url", "3", "1", "0", "0"], ["3", "sandbox", "url", "1", "0", "0", "0"]]
        )
        let counts = try ledger.database.readers.read { connection throws(StorageError) in
            try connection.query("SELECT n FROM ledger_counts WHERE name = 'reports'").first?.first?.integer
        }
        #expect(counts == 0)
        try ledger.reports.enqueueReport(LedgerDashboardTests.report("r1", for: "b"), lineItemRows: [])
        #expect(try ledger.reports.reportSummary().counts == [.pending: 1])
        try ledger.reports.recordAttempt(
            "r1",
            ReportAttempt(state: .accepted, httpStatus: 200, response: "", nextAttemptAt: 0, at: 5)
        )
        #expect(try ledger.reports.reportSummary().counts == [.accepted: 1])
        // Accepted once: a second acceptance of the token (a later report) is not a second reported token.
        let reported = try ledger.database.readers.read { connection throws(StorageError) in
            try connection.query("SELECT sum(reported) FROM token_days").first?.first?.integer
        }
        #expect(reported == 1)
    }
}
