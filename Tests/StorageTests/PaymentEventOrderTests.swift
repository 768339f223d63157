import Domain
import Foundation
import Storage
import TestSupport
import Testing

/// The events of one provider entity (`orderKey`) are read in the order they happened, where the first of them
/// to arrive would be; a waiting one is due again once an earlier-dated one of its entity arrives. On SQLite, and
/// on PostgreSQL when the tier's server is given.
@Suite("Payment event order")
struct PaymentEventOrderTests {
    static func event(_ id: String, received: Int64, occurred: Int64? = nil, key: String? = nil)
        -> StoredPaymentEvent
    {
        StoredPaymentEvent(
            provider: ProviderID(key == nil ? "stripe" : "paddle"),
            eventId: id,
            type: "test",
            body: "{}",
            receivedAt: received,
            occurredAt: occurred,
            orderKey: key
        )
    }

    @Test func anEntitysEventsAreReadInTheOrderTheyHappened() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let payments = ledger.payments
        #expect(try payments.storePaymentEvent(Self.event("refund", received: 10, occurred: 500, key: "txn_1")))
        #expect(try payments.storePaymentEvent(Self.event("evt_s1", received: 20)))
        #expect(try payments.storePaymentEvent(Self.event("other", received: 25, occurred: 100, key: "txn_2")))
        #expect(try payments.storePaymentEvent(Self.event("sale", received: 30, occurred: 400, key: "txn_1")))
        #expect(try payments.storePaymentEvent(Self.event("evt_s2", received: 40)))
        let read = try payments.paymentEvents(unprocessedOnly: true, dueAt: 1_000, limit: 10).map(\.eventId)
        #expect(read == ["sale", "refund", "evt_s1", "other", "evt_s2"])
    }

    @Test func aWaitingEventIsDueOnceAnEarlierOneOfItsEntityArrives() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let payments = ledger.payments
        #expect(try payments.storePaymentEvent(Self.event("refund", received: 10, occurred: 500, key: "txn_1")))
        #expect(try payments.storePaymentEvent(Self.event("late", received: 11, occurred: 900, key: "txn_1")))
        try payments.deferPaymentEvent(
            provider: ProviderID("paddle"),
            eventId: "refund",
            until: 60_000,
            reason: "no sale"
        )
        try payments.deferPaymentEvent(
            provider: ProviderID("paddle"),
            eventId: "late",
            until: 60_000,
            reason: "no sale"
        )
        // `late` waits behind `refund`, dated before it and unprocessed: it stays due.
        #expect(try payments.paymentEvents(unprocessedOnly: true, dueAt: 1_000, limit: 10).map(\.eventId) == ["late"])
        // A later-dated event of the entity, or one of another, wakes nothing.
        #expect(try payments.storePaymentEvent(Self.event("after", received: 12, occurred: 950, key: "txn_1")))
        #expect(try payments.storePaymentEvent(Self.event("else", received: 13, occurred: 1, key: "txn_9")))
        #expect(
            try payments.paymentEvents(unprocessedOnly: true, dueAt: 1_000, limit: 10).map(\.eventId)
                == ["late", "after", "else"]
        )
        #expect(try payments.storePaymentEvent(Self.event("sale", received: 20, occurred: 400, key: "txn_1")))
        #expect(
            try payments.paymentEvents(unprocessedOnly: true, dueAt: 1_000, limit: 10).map(\.eventId)
                == ["sale", "refund", "late", "after", "else"]
        )
    }
}
