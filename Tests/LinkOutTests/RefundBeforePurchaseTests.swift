import Domain
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// Stripe keeps no order between events: a full refund can come before the checkout's completion. It waits for
/// its purchase, and is acted on as soon as that purchase is in, not after its put-off time (up to a tenth of its
/// age: half an hour for a completion five hours late), during which the refunded purchase stayed entitled.
@Suite("Payment flow: a refund before its purchase")
struct RefundBeforePurchaseTests {
    @Test func aRefundThatCameFirstEndsThePurchaseOnceItIsIn() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let checkout = try harness.openCheckout()
        #expect(try harness.choose(checkout, product: "pro.lifetime", currency: "EUR").status == 303)
        let refund = StripeEvents.refunded(
            id: "evt_refund_first",
            charge: "ch_first",
            paymentIntent: "pi_first",
            amount: 2999,
            refunded: 2999
        )
        #expect(try harness.deliver(refund).status == 200)
        let ledger = harness.live.application.ledger
        // Put off: it waits for its purchase.
        #expect(
            eventually(within: 30) {
                (try? ledger.payments.paymentEvents(unprocessedOnly: true, limit: 10).first?.outcome)??
                    .contains(PaymentStore.noPurchaseYet) == true
            }
        )
        let completed = StripeEvents.sessionCompleted(
            id: "evt_completed_late",
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.lifetime",
            total: 2999,
            tax: 479,
            country: "DE",
            paymentIntent: "pi_first"
        )
        #expect(try harness.deliver(completed).status == 200)
        // Both acted on well within the put-off refund's 30 s: the purchase comes in refunded.
        try harness.waitForEvents(seconds: 10)
        #expect(try ledger.payments.purchase(id: "cs_test_fake1")?.status == .refunded)
    }

    /// The same for a renewal's payment: a refund of it that came first waits for the charge the renewal records
    /// (a subscription's purchase names no payment), and is acted on as soon as that is in.
    @Test func aRefundThatCameBeforeItsRenewalIsActedOnOnceTheRenewalIsIn() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let checkout = try harness.openCheckout()
        #expect(try harness.choose(checkout, product: "pro.monthly", currency: "EUR").status == 303)
        let started = StripeEvents.sessionCompleted(
            id: "evt_started",
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.monthly",
            mode: "subscription",
            total: 999,
            tax: 0,
            country: "DE",
            subscription: "sub_1"
        )
        #expect(try harness.deliver(started).status == 200)
        try harness.waitForEvents()
        let refund = StripeEvents.refunded(
            id: "evt_refund_renewal",
            charge: "ch_renewal",
            paymentIntent: "pi_renewal",
            amount: 999,
            refunded: 999
        )
        #expect(try harness.deliver(refund).status == 200)
        let ledger = harness.live.application.ledger
        #expect(
            eventually(within: 30) {
                (try? ledger.payments.paymentEvents(unprocessedOnly: true, limit: 10).first?.outcome)??
                    .contains(PaymentStore.noPurchaseYet("pi_renewal")) == true
            }
        )
        let periodEnd = try harness.firstPeriodEnd(on: checkout.externalPurchaseId)
        let renewal = StripeEvents.renewal(
            id: "evt_renewed",
            invoice: "in_2",
            subscription: "sub_1",
            total: 999,
            start: periodEnd,
            end: periodEnd + 30 * 86_400,
            paymentIntent: "pi_renewal"
        )
        #expect(try harness.deliver(renewal).status == 200)
        try harness.waitForEvents(seconds: 10)
        #expect(try ledger.payments.paymentEvents(unprocessedOnly: true, limit: 10).isEmpty)
    }
}
