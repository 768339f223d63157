import Foundation
import Lifecycle
import Payments
import TestSupport
import Testing

@testable import LinkOut
@testable import Storage

/// An erasure leaves nothing of the person in the ledger's file, its free pages included: an event's body as
/// long as Stripe's (some kilobytes) sits mostly in overflow pages, and the event's processing rewrote the row and
/// freed those pages with her data in them, where a copy of the file still read it after the erasure.
@Suite("Privacy: free pages")
struct PrivacyFreePagesTests {
    static let email = "grace.hopper@example.com"

    /// How many times `text` is in the ledger's file, once its WAL is folded in.
    static func copies(of text: String, in live: LiveApplication) throws -> Int {
        #expect(live.ledger().privacy.foldWAL())
        let path = live.application.configuration.storage.dataDir + "/linkout.sqlite"
        let bytes = try #require(FileManager.default.contents(atPath: path))
        var count = 0
        var from = bytes.startIndex
        while let found = bytes.range(of: Data(text.utf8), in: from..<bytes.endIndex) {
            count += 1
            from = found.upperBound
        }
        return count
    }

    @Test func anErasureZeroesTheCopiesFreedPagesKeep() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let padding = String(repeating: "Compiler pioneer. ", count: 400)
        let event = """
            {"id":"evt_grace","object":"event","type":"customer.updated","created":\(Clock.system.nowSeconds()),\
            "livemode":false,"data":{"object":{"id":"cus_GRACE01","object":"customer","description":"\(padding)",\
            "email":"\(Self.email)","name":"Grace Hopper"}}}
            """
        #expect(try harness.deliver(event).status == 200)
        try harness.waitForEvents()
        // The stored body, and the copy its processing freed.
        #expect(try Self.copies(of: Self.email, in: harness.live) >= 2)

        let summary = try Erasure(ledger: harness.live.ledger()).erase(email: Self.email)
        #expect(summary.bodies == 1)
        #expect(try Self.copies(of: Self.email, in: harness.live) == 0)
        #expect(try Self.copies(of: "Grace Hopper", in: harness.live) == 0)
        // The free pages are given back: no scratch table is left, and the ledger takes landings as before.
        let path = harness.live.application.configuration.storage.dataDir + "/linkout.sqlite"
        let scratch = try SQLiteConnection(path: path, readOnly: true).query(
            "SELECT name FROM sqlite_master WHERE name = 'free_page_zeros'"
        )
        #expect(scratch.isEmpty)
        #expect(try harness.openCheckout().id.isEmpty == false)
    }
}
