import Domain
import Foundation
import Lifecycle
import Testing

@testable import Storage

/// An instance paused mid-send (its lease over) records its attempt too late: another instance has settled the
/// report meanwhile. Its attempt is dropped: it turned an accepted report back to pending, and the report was
/// sent to Apple again.
@Suite struct StaleReportAttemptTests {
    @Test func anAttemptOnASettledReportIsDropped() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Ledger(directory: folder.path)
        defer { ledger.close() }
        let now = Clock.system.nowMilliseconds()
        try ClockStepTests.insertReport(
            "settled",
            nextAttemptAt: now,
            owner: ledger.instance,
            leaseUntil: now,
            into: ledger
        )
        // Another instance took the lease over once it ended, and Apple accepted its send.
        try ledger.database.writer.write { connection throws(StorageError) in
            try connection.query(
                """
                UPDATE reports SET state = 'accepted', attempts = 1, lease_owner = NULL, lease_until = NULL,
                    accepted_at = ? WHERE request_identifier = 'settled'
                """,
                [.integer(now)]
            )
        }
        let late = ReportAttempt(
            state: .pending,
            httpStatus: nil,
            response: "timed out",
            nextAttemptAt: now + 5_000,
            at: now + 1_000
        )
        try ledger.reports.recordAttempt(RequestIdentifier("settled"), late)
        let report = try #require(try ledger.reports.report(RequestIdentifier("settled")))
        #expect(report.state == .accepted && report.attempts == 1)
    }
}
