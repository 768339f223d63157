import Domain
import Testing

@testable import Storage

/// A column of a closed set (environment, source, report state and status, ...) holding a value this version does
/// not know reads as an error that names the column and the value, never as a default: a made-up `production`
/// or `pending` would send a report to the wrong host, or send it again.
@Suite("Unknown stored values")
struct UnknownStoredValueTests {
    /// Writes `sql` as raw SQL, as a newer version or a hand edit would.
    static func write(_ ledger: Ledger, _ sql: String) throws {
        try ledger.database.writer.write { connection throws(StorageError) in try connection.execute(sql) }
    }

    static func expectUnknown(
        _ column: String,
        _ value: String,
        _ read: () throws(StorageError) -> Void
    ) {
        do {
            try read()
            Issue.record("\(column) = '\(value)' was read without an error")
        } catch {
            #expect(error.code == .unknownValue)
            #expect(error.message.contains(column))
            #expect(error.message.contains("'\(value)'"))
        }
    }

    @Test func aTokenWithAnUnknownEnvironmentOrSourceIsAnError() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        _ = try ledger.tokens.recordForwardedToken(LedgerTests.token("t"), checkoutId: "c-t", at: 1)
        #expect(try ledger.tokens.token("t")?.token.environment == .production)

        try Self.write(ledger, "UPDATE tokens SET environment = 'staging' WHERE external_purchase_id = 't'")
        Self.expectUnknown("tokens.environment", "staging") { () throws(StorageError) in
            _ = try ledger.tokens.token("t")
        }
        Self.expectUnknown("tokens.environment", "staging") { () throws(StorageError) in
            _ = try ledger.tokens.tokens()
        }
        try Self.write(
            ledger,
            "UPDATE tokens SET environment = 'production', source = 'fax' WHERE external_purchase_id = 't'"
        )
        Self.expectUnknown("tokens.source", "fax") { () throws(StorageError) in _ = try ledger.tokens.token("t") }
    }

    @Test func aReportWithAnUnknownStateOrStatusIsAnError() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        _ = try ledger.tokens.recordForwardedToken(LedgerTests.token("r"), checkoutId: "c-r", at: 1)
        let report = StoredReport(
            requestIdentifier: "req-1",
            externalPurchaseId: "r",
            environment: .production,
            bundleId: "com.example",
            status: .noLineItem,
            body: "{}",
            nextAttemptAt: 0,
            createdAt: 1
        )
        try ledger.reports.enqueueReport(report, lineItemRows: [])
        #expect(try ledger.reports.report("req-1")?.state == .pending)

        try Self.write(ledger, "UPDATE reports SET state = 'paused' WHERE request_identifier = 'req-1'")
        Self.expectUnknown("reports.state", "paused") { () throws(StorageError) in
            _ = try ledger.reports.report("req-1")
        }
        // The outbox's counts too: an unknown state is not left out of them quietly.
        Self.expectUnknown("reports.state", "paused") { () throws(StorageError) in
            _ = try ledger.reports.reportSummary()
        }
        try Self.write(
            ledger,
            "UPDATE reports SET state = 'pending', status = 'PARTIAL_LINE_ITEM' WHERE request_identifier = 'req-1'"
        )
        Self.expectUnknown("reports.status", "PARTIAL_LINE_ITEM") { () throws(StorageError) in
            _ = try ledger.reports.dueReports(now: 1, limit: 10)
        }
    }
}
