import Domain
import Testing

@testable import Storage

@Suite("A refund written from the total it was worked out from")
struct RefundTotalGuardTests {
    /// Two refunds of one charge worked out side by side from the same refunded total (two instances, each with one
    /// of Stripe's cumulative `charge.refunded` deliveries): the second to be written finds the total changed and
    /// is rolled back, to be worked out again from the new total (both were reported in full: 800 of 500).
    @Test func aRefundWorkedOutFromATotalThatChangedIsRolledBack() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let charge = PurchaseCharge(
            chargeKey: .payment("pi_guard"),
            purchaseId: "purchase-guard",
            lineItemId: "line-guard",
            amountTotal: 1_000,
            amountTax: 0,
            amountRefunded: 0,
            createdAt: 1
        )
        try ledger.payments.apply(PaymentChange(event: nil, outcome: "paid", charges: [charge], at: 1))
        var larger = PaymentChange(event: nil, outcome: "refund", refund: (.payment("pi_guard"), 500), at: 2)
        larger.refundedBefore = 0
        var smaller = PaymentChange(event: nil, outcome: "refund", refund: (.payment("pi_guard"), 300), at: 3)
        smaller.refundedBefore = 0
        try ledger.payments.apply(larger)
        let conflict = #expect(throws: StorageError.self) { try ledger.payments.apply(smaller) }
        #expect(conflict?.code == .conflict)
        #expect(try ledger.payments.charge(key: .payment("pi_guard"))?.amountRefunded == 500)
        // Worked out again from 500, the same delivery changes nothing; a change that names no total is written.
        smaller.refundedBefore = 500
        try ledger.payments.apply(smaller)
        #expect(try ledger.payments.charge(key: .payment("pi_guard"))?.amountRefunded == 500)
        let unguarded = PaymentChange(event: nil, outcome: "refund", refund: (.payment("pi_guard"), 700), at: 4)
        try ledger.payments.apply(unguarded)
        #expect(try ledger.payments.charge(key: .payment("pi_guard"))?.amountRefunded == 700)
    }
}
