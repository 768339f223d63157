import Foundation
import Lifecycle
import Synchronization
import Testing

@testable import Storage

/// What a wall clock stepped back leaves in the outboxes is brought forward: retries further ahead than any wait
/// are due, and this instance's own leases that far ahead end. Another instance's lease is never taken: its
/// clock set it.
@Suite struct ClockStepTests {
    static func insertReport(
        _ id: String,
        nextAttemptAt: Int64,
        owner: String?,
        leaseUntil: Int64?,
        into ledger: Ledger
    )
        throws
    {
        try ledger.database.writer.write { connection throws(StorageError) in
            try connection.query(
                """
                INSERT INTO reports (request_identifier, external_purchase_id, environment, bundle_id, status, body,
                    state, next_attempt_at, created_at, lease_owner, lease_until)
                VALUES (?, ?, 'production', 'com.example', 'NO_LINE_ITEM', '{}', 'pending', ?, 0, ?, ?)
                """,
                [.text(id), .text("token-" + id), .integer(nextAttemptAt), .optional(owner), .optional(leaseUntil)]
            )
        }
    }

    static func row(_ id: String, in ledger: Ledger) throws -> (next: Int64?, owner: String?) {
        let row = try ledger.database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT next_attempt_at, lease_owner FROM reports WHERE request_identifier = ?",
                [.text(id)]
            )
        }
        return (row.first?[0].integer, row.first?[1].text)
    }

    @Test func aStepBackBringsRetriesAndOwnLeasesForward() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Ledger(directory: folder.path)
        defer { ledger.close() }
        let now = Clock.system.nowMilliseconds()
        let day: Int64 = 86_400_000
        try Self.insertReport("ahead", nextAttemptAt: now + day, owner: nil, leaseUntil: nil, into: ledger)
        try Self.insertReport("hour", nextAttemptAt: now + 3_600_000, owner: nil, leaseUntil: nil, into: ledger)
        try Self.insertReport("mine", nextAttemptAt: now, owner: ledger.instance, leaseUntil: now + day, into: ledger)
        try Self.insertReport("theirs", nextAttemptAt: now, owner: "other", leaseUntil: now + day, into: ledger)

        // The first look brings forward what a clock that ran ahead left (this process cannot know its past).
        let wall = Mutex<Int64>(now)
        let uptime = Mutex<UInt64>(10_000_000_000)
        let clock = Clock(milliseconds: { wall.withLock { $0 } }, uptimeNanoseconds: { uptime.withLock { $0 } })
        #expect(try ledger.bringForwardAfterClockStep(clock: clock) == 2)
        #expect(try Self.row("ahead", in: ledger).next == now)
        #expect(try Self.row("hour", in: ledger).next == now + 3_600_000, "within the longest wait: kept")
        #expect(try Self.row("mine", in: ledger).owner == nil)
        #expect(try Self.row("theirs", in: ledger).owner == "other")

        // No step since: nothing is looked at, even what lies far ahead now.
        try Self.insertReport("later", nextAttemptAt: now + day, owner: nil, leaseUntil: nil, into: ledger)
        uptime.withLock { $0 += 5_000_000_000 }
        wall.withLock { $0 += 5_000 }
        #expect(try ledger.bringForwardAfterClockStep(clock: clock) == 0)
        #expect(try Self.row("later", in: ledger).next == now + day)
        // The wall clock stepped back a day while the monotonic clock went on: every pending row was set ahead of
        // the corrected clock by more than any wait, and is due now.
        wall.withLock { $0 -= day }
        #expect(try ledger.bringForwardAfterClockStep(clock: clock) == 5)
        #expect(try Self.row("later", in: ledger).next == now + 5_000 - day)
        #expect(try Self.row("theirs", in: ledger).owner == "other")
    }
}
