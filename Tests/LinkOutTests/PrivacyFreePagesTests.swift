import Foundation
import Lifecycle
import Payments
import TestSupport
import Testing

@testable import LinkOut
@testable import Storage

/// Nothing of an erased person is left in the ledger's file, its free pages included. An event's body as long as
/// Stripe's (some kilobytes) sits mostly in overflow pages, and the event's processing rewrites the row: with
/// `secure_delete = FAST` (releases before 0.35.0) the pages it gave up kept her data, and a copy of the file read
/// it after the erasure.
@Suite("Privacy: free pages")
struct PrivacyFreePagesTests {
    static let email = "grace.hopper@example.com"

    /// How many times `text` is in the ledger's file, once its WAL is folded in.
    static func copies(of text: String, in live: LiveApplication) throws -> Int {
        #expect(live.ledger().privacy.foldWAL())
        let bytes = try #require(FileManager.default.contents(atPath: path(live)))
        var count = 0
        var from = bytes.startIndex
        while let found = bytes.range(of: Data(text.utf8), in: from..<bytes.endIndex) {
            count += 1
            from = found.upperBound
        }
        return count
    }

    static func path(_ live: LiveApplication) -> String {
        live.application.configuration.storage.dataDir + "/linkout.sqlite"
    }

    /// The ledger file's size in pages and its free pages.
    static func pages(_ live: LiveApplication) throws -> (total: Int64, free: Int64) {
        let connection = try SQLiteConnection(path: path(live), readOnly: true)
        let total = try connection.query("PRAGMA page_count").first?.first?.integer ?? 0
        let free = try connection.query("PRAGMA freelist_count").first?.first?.integer ?? 0
        return (total, free)
    }

    /// Sets the writer's `secure_delete`.
    static func secureDelete(_ mode: String, _ live: LiveApplication) throws {
        try live.ledger().database.writer.withConnection { connection throws(StorageError) in
            try connection.execute("PRAGMA secure_delete = \(mode)")
        }
    }

    /// Grace's event, delivered and processed.
    static func gracesEvent(_ harness: PaymentHarness) throws {
        let padding = String(repeating: "Compiler pioneer. ", count: 400)
        let event = """
            {"id":"evt_grace","object":"event","type":"customer.updated","created":\(Clock.system.nowSeconds()),\
            "livemode":false,"data":{"object":{"id":"cus_GRACE01","object":"customer","description":"\(padding)",\
            "email":"\(email)","name":"Grace Hopper"}}}
            """
        #expect(try harness.deliver(event).status == 200)
        try harness.waitForEvents()
    }

    @Test func theLedgerZeroesThePagesItFrees() throws {
        let harness = try PaymentHarness(provider: .stripe)
        try Self.gracesEvent(harness)
        #expect(try Self.copies(of: Self.email, in: harness.live) == 1, "the stored body only")
    }

    /// The retention pass zeroes the free pages an older release left once, even when it has nothing to rewrite
    /// (a server killed while it zeroed rewrote nothing more at its next passes, and never zeroed), and not again.
    @Test func theRetentionPassZeroesFreePagesOnce() throws {
        let harness = try PaymentHarness(provider: .stripe) { $0.retention.personalDataDays = 30 }
        try Self.secureDelete("FAST", harness.live)
        try Self.gracesEvent(harness)
        try Self.secureDelete("ON", harness.live)
        #expect(try Self.copies(of: Self.email, in: harness.live) >= 2)
        // As a ledger upgraded from 0.34 is: not zeroed yet (this one's first pass at start found nothing free).
        try harness.live.ledger().database.writer.write { connection throws(StorageError) in
            try connection.query("DELETE FROM settings WHERE name = ?", [.text(RetentionPass.freePagesZeroed)])
        }
        let retention = try #require(harness.live.application.retention)
        #expect(retention.pass() == 0, "nothing is 30 days old")
        #expect(try Self.copies(of: Self.email, in: harness.live) == 1, "the stored body only")
        let ledger = harness.live.ledger()
        let zeroedAt = try #require(try ledger.settings.setting(named: RetentionPass.freePagesZeroed))
        #expect(retention.pass() == 0)
        #expect(try ledger.settings.setting(named: RetentionPass.freePagesZeroed) == zeroedAt, "once")
    }

    /// A killed `linkout erase` left its zeroing half done, the erasure recorded: the server finishes it at
    /// start (it gave the scratch table back, and the pages not reached yet kept the address).
    @Test func aZeroingAKilledRunLeftIsFinished() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let ledger = harness.live.ledger()
        #expect(try ledger.privacy.finishCutShortZeroing() == false, "none left")
        // The table as the killed run left it, then the pages it had not reached (made after it, here).
        try ledger.database.writer.write { connection throws(StorageError) in
            try connection.execute("CREATE TABLE free_page_zeros (zeros BLOB NOT NULL)")
            try connection.execute("INSERT INTO free_page_zeros (zeros) VALUES (zeroblob(200000))")
        }
        try Self.secureDelete("FAST", harness.live)
        try Self.gracesEvent(harness)
        try Self.secureDelete("ON", harness.live)
        #expect(try Self.copies(of: Self.email, in: harness.live) >= 2)
        let held = try Self.pages(harness.live)
        #expect(try ledger.privacy.finishCutShortZeroing())
        #expect(try Self.copies(of: Self.email, in: harness.live) == 1, "the stored body only")
        let after = try Self.pages(harness.live)
        #expect(after.total <= held.total + 1 && after.free >= held.free, "\(held) → \(after)")
        let scratch = try SQLiteConnection(path: Self.path(harness.live), readOnly: true).query(
            "SELECT name FROM sqlite_master WHERE name = 'free_page_zeros'"
        )
        #expect(scratch.isEmpty)
    }

    /// How many times `text` is in the ledger's file and its WAL as they are on disk, nothing folded first.
    static func copiesOnDisk(of text: String, in live: LiveApplication) -> Int {
        [path(live), path(live) + "-wal"].reduce(0) { count, file in
            guard let bytes = FileManager.default.contents(atPath: file) else { return count }
            var count = count
            var from = bytes.startIndex
            while let found = bytes.range(of: Data(text.utf8), in: from..<bytes.endIndex) {
                count += 1
                from = found.upperBound
            }
            return count
        }
    }

    /// The retention pass folds the WAL once it has rewritten something: the rewritten pages were only in the WAL,
    /// and the file kept the bodies as they had been (a quiet ledger reaches no checkpoint for weeks).
    @Test func theRetentionPassLeavesNoCopyInTheFile() throws {
        let harness = try PaymentHarness(provider: .stripe) { $0.retention.personalDataDays = 1 }
        try Self.gracesEvent(harness)
        let ledger = harness.live.ledger()
        try ledger.database.writer.write { connection throws(StorageError) in
            try connection.execute("UPDATE payment_events SET received_at = received_at - 5 * 86400000")
        }
        #expect(ledger.privacy.foldWAL())
        #expect(Self.copiesOnDisk(of: Self.email, in: harness.live) == 1, "the stored body, in the file")
        let retention = try #require(harness.live.application.retention)
        #expect(retention.pass() == 1)
        #expect(Self.copiesOnDisk(of: Self.email, in: harness.live) == 0)
        #expect(Self.copiesOnDisk(of: "Grace Hopper", in: harness.live) == 0)
    }

    @Test func anErasureZeroesWhatAnOlderReleaseLeftInFreePages() throws {
        let harness = try PaymentHarness(provider: .stripe)
        // As a release before 0.35.0 ran its writer.
        try Self.secureDelete("FAST", harness.live)
        try Self.gracesEvent(harness)
        try Self.secureDelete("ON", harness.live)
        #expect(try Self.copies(of: Self.email, in: harness.live) >= 2, "the stored body and the freed copy")
        let before = try Self.pages(harness.live)

        let summary = try Erasure(ledger: harness.live.ledger()).erase(email: Self.email)
        #expect(summary.bodies == 1 && summary.freePagesLeft == nil)
        #expect(try Self.copies(of: Self.email, in: harness.live) == 0)
        #expect(try Self.copies(of: "Grace Hopper", in: harness.live) == 0)
        // The file is not made longer, now or on a second run (but for a page where the last free ones meet a
        // full leaf), and no scratch table is left.
        let after = try Self.pages(harness.live)
        #expect(after.total <= before.total + 1, "\(before) → \(after)")
        try harness.live.ledger().privacy.zeroFreePages()
        #expect(try Self.pages(harness.live).total <= after.total + 1)
        let scratch = try SQLiteConnection(path: Self.path(harness.live), readOnly: true).query(
            "SELECT name FROM sqlite_master WHERE name = 'free_page_zeros'"
        )
        #expect(scratch.isEmpty)
        #expect(try harness.openCheckout().id.isEmpty == false)
    }
}
