import Domain
import Testing

@testable import Storage

@Suite("A purchase written from the row it was worked out from")
struct PurchaseGuardTests {
    static func subscription(periodEnd: Int64, updatedAt: Int64) -> PurchaseRecord {
        PurchaseRecord(
            purchaseId: "cs_guard",
            provider: "stripe",
            checkoutId: nil,
            externalPurchaseId: nil,
            bundleId: "com.example",
            productId: "pro.monthly",
            kind: .subscription,
            status: .paid,
            currency: "EUR",
            amountTotal: 399,
            amountTax: 0,
            taxCountry: "DEU",
            subscriptionId: "sub_guard",
            buyLineItemId: nil,
            periodEnd: periodEnd,
            paidDays: 0,
            createdAt: 1,
            updatedAt: updatedAt
        )
    }

    /// A refund of a subscription's first payment worked out while another instance recorded its renewal (both
    /// from the same row): the renewal is written first, and the refund, which would set the renewed
    /// subscription back to refunded with the old period end, finds the row changed and is rolled back, to be
    /// worked out again from the renewed row.
    @Test func aRefundWorkedOutFromAPurchaseThatChangedIsRolledBack() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let started = Self.subscription(periodEnd: 1_000, updatedAt: 10)
        try ledger.payments.apply(PaymentChange(event: nil, outcome: "started", purchase: started, at: 10))
        let read = try #require(try ledger.payments.purchase(id: "cs_guard"))

        var renewed = read
        renewed.periodEnd = 2_000
        renewed.updatedAt = 20
        var renewal = PaymentChange(event: nil, outcome: "renewal", purchase: renewed, at: 20)
        renewal.purchaseAsRead = read
        var refunded = read
        refunded.status = .refunded
        refunded.updatedAt = 21
        var refund = PaymentChange(event: nil, outcome: "refund", purchase: refunded, at: 21)
        refund.purchaseAsRead = read

        try ledger.payments.apply(renewal)
        let conflict = #expect(throws: StorageError.self) { try ledger.payments.apply(refund) }
        #expect(conflict?.code == .conflict)
        let stored = try #require(try ledger.payments.purchase(id: "cs_guard"))
        #expect(stored.status == .paid)
        #expect(stored.periodEnd == 2_000)

        // Worked out again from the row as it is now, the change is written.
        refund.purchaseAsRead = stored
        refund.purchase?.periodEnd = stored.periodEnd
        try ledger.payments.apply(refund)
        #expect(try ledger.payments.purchase(id: "cs_guard")?.status == .refunded)
    }
}
