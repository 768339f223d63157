import Lifecycle
import Logging
import Synchronization
import Testing

@testable import LinkOut
@testable import Storage

/// The outbox gauges at a scrape: a ledger read that fails leaves its gauges out and is logged, and the gauges
/// that need no read still answer (a failed read must not pass for an empty outbox, nor hide everything else).
@Suite("Report gauges")
struct ReportGaugesTests {
    @Test func aFailedReadLeavesItsGaugesOutAndIsLogged() throws {
        let harness = try ReportingHarness()
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "test", level: .error, sink: .init { line in lines.withLock { $0.append(line) } })
        let before = ReportGauges.sample(
            ledger: harness.ledger,
            reporting: harness.service,
            clock: .system,
            logger: logger
        )
        #expect(before.contains { $0.name == "linkout_reports_pending" })
        #expect(lines.withLock { $0 }.isEmpty)

        // The reports table gone from under the reads (a broken database, say): its reads fail.
        try harness.ledger.database.writer.write { connection throws(StorageError) in
            try connection.execute("ALTER TABLE reports RENAME TO reports_away")
        }
        let after = ReportGauges.sample(
            ledger: harness.ledger,
            reporting: harness.service,
            clock: .system,
            logger: logger
        )
        #expect(!after.contains { $0.name == "linkout_reports_pending" })
        #expect(!after.contains { $0.name == "linkout_oldest_unreported_token_age_seconds" })
        #expect(after.contains { $0.name == "linkout_line_items_held" })
        #expect(after.contains { $0.name == "linkout_reporting_running" })
        let logged = lines.withLock { $0 }
        #expect(logged.contains { $0.contains("metrics could not read the ledger") && $0.contains("linkout_reports") })
    }
}
