import Domain
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// Paddle delivers notifications in any order (Paddle: "How webhooks work"): a transaction's are acted on in
/// `occurred_at` order, so a refund that arrives before the sale it refunds is made right after the sale, not three
/// days later.
@Suite("Paddle event order")
struct PaddleEventOrderTests {
    @Test func aRefundDeliveredBeforeItsSaleIsActedOnRightAfterIt() throws {
        let harness = try PaddleFlowTests.Harness()
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.lifetime", checkout)
        let now = Clock.system.nowSeconds()
        let completed = PaddleFixtures.transaction(
            eventId: "evt_05done",
            occurredAt: PaddleFlowTests.time(now - 5),
            transactionId: transaction,
            currency: "EUR",
            totals: .init(subtotal: 2520, tax: 479, total: 2999),
            customData: harness.custom(checkout, product: "pro.lifetime")
        )
        let refund = PaddleFixtures.adjustment(
            type: "adjustment.created",
            eventId: "evt_05refund",
            occurredAt: PaddleFlowTests.time(now - 1),
            adjustmentId: "adj_05refund",
            action: "refund",
            status: "approved",
            transactionId: transaction,
            currency: "EUR",
            total: 1000,
            tax: 160
        )
        // The refund first; then the sale, twice (a redelivery).
        #expect(try harness.deliver(refund).status == 200)
        #expect(try harness.deliver(completed).status == 200)
        #expect(try harness.deliver(completed).status == 200)
        // Without the order the refund, tried first, would wait 30 s or more before it is tried again.
        try harness.payments.waitForEvents()
        let events = try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10)
        #expect(events.map(\.orderKey) == [transaction, transaction])
        #expect(events.first { $0.eventId == "evt_05done" }?.occurredAt == (now - 5) * 1000)
        let items = harness.payments.reportedLineItems()
        #expect(
            try items.map { try PaymentHarness.canonical($0) } == [
                #"{"amountTaxExclusive":25200,"amountTaxInclusive":29990,"creationDate":0,"eventType":"BUY","lineItemId":"\#(transaction)","netAmountTaxExclusive":25200,"pricingCurrency":"EUR","productIdentifier":"pro.lifetime","productType":"ONE_TIME_BUY","quantity":1,"reportingCurrency":"EUR","taxAmount":4790,"taxCountry":"DEU"}"#,
                #"{"amountTaxExclusive":8400,"amountTaxInclusive":10000,"creationDate":0,"eventType":"REFUND","lineItemId":"\#(transaction):refund:adj_05refund","netAmountTaxExclusive":16800,"pricingCurrency":"EUR","referenceLineItemId":"\#(transaction)","reportingCurrency":"EUR","taxAmount":1600,"taxCountry":"DEU"}"#,
            ]
        )
        #expect(
            try harness.live.application.ledger.payments.purchases(
                externalPurchaseId: ExternalPurchaseID(checkout.externalPurchaseId)
            )
            .count == 1
        )
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }
}
