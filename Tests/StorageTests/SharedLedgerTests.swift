import Dispatch
import Foundation
import Storage
import Synchronization
import TestSupport
import Testing

/// What several instances on one database share: the operator's sessions, and each purchase's webhook order.
/// On PostgreSQL two ledgers (two instances' worth of connections) work on one schema at once; SQLite allows one
/// process per file, so there one ledger takes both roles.
@Suite("Shared ledger")
struct SharedLedgerTests {
    /// Two ledgers on `folder`'s database (the same one twice on SQLite).
    static func pair(_ folder: LedgerTests.TemporaryFolder) throws -> (Ledger, Ledger) {
        let first = try LedgerTests.open(folder)
        guard TestDatabase.postgresURL != nil else { return (first, first) }
        return (first, try LedgerTests.open(folder))
    }

    @Test func aSessionStartedThroughOneLedgerIsKnownToTheOtherUntilItEnds() throws {
        let folder = LedgerTests.TemporaryFolder()
        let (one, other) = try Self.pair(folder)
        defer {
            one.close()
            other.close()
        }
        try one.adminSessions.startAdminSession(key: "k1", expiresAt: 5_000, now: 1_000, keep: 10)
        #expect(try other.adminSessions.adminSessionExpiry(key: "k1") == 5_000)
        #expect(try other.adminSessions.adminSessionExpiry(key: "unknown") == nil)
        try other.adminSessions.endAdminSession(key: "k1")
        #expect(try one.adminSessions.adminSessionExpiry(key: "k1") == nil)
    }

    @Test func startingASessionDropsExpiredOnesAndAllButTheLatest() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        try ledger.adminSessions.startAdminSession(key: "expired", expiresAt: 1_500, now: 1_000, keep: 3)
        for (index, key) in ["a", "b", "c"].enumerated() {
            try ledger.adminSessions.startAdminSession(key: key, expiresAt: 10_000 + Int64(index), now: 2_000, keep: 3)
        }
        #expect(try ledger.adminSessions.adminSessionExpiry(key: "expired") == nil)
        #expect(try ledger.adminSessions.adminSessionExpiry(key: "a") == 10_000)
        try ledger.adminSessions.startAdminSession(key: "d", expiresAt: 10_003, now: 2_000, keep: 3)
        // The one closest to its end made room.
        #expect(try ledger.adminSessions.adminSessionExpiry(key: "a") == nil)
        for key in ["b", "c", "d"] { #expect(try ledger.adminSessions.adminSessionExpiry(key: key) != nil) }
    }

    /// Events of one purchase acted on at once through two ledgers: each webhook gets its own position, 1…n,
    /// so the receiver gets them in order and one after another (before positions were unique, two
    /// transactions could read the same highest position and both take the next).
    @Test func eachWebhookOfAPurchaseGetsItsOwnPositionWhenEventsArriveAtOnce() throws {
        let folder = LedgerTests.TemporaryFolder()
        let (one, other) = try Self.pair(folder)
        defer {
            one.close()
            other.close()
        }
        let events = 60
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: events) { index in
            let change = PaymentChange(
                event: nil,
                outcome: "test",
                webhooks: [
                    WebhookDelivery(
                        eventId: "evt-\(index)",
                        purchaseId: "purchase-1",
                        type: "purchase.updated",
                        body: "{}",
                        nextAttemptAt: 0,
                        createdAt: 1
                    )
                ],
                at: 1
            )
            do throws(StorageError) {
                try (index.isMultiple(of: 2) ? one : other).payments.apply(change)
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let stored = try one.entitlements.webhooks(state: nil, limit: 1_000, offset: 0)
        #expect(stored.count == events)
        #expect(stored.map(\.sequence).sorted() == Array(1...Int64(events)))
    }
}
