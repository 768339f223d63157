import Domain
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// A provider's payment of a checkout the ledger does not know, named as linkout names its checkouts: what a
/// ledger restored from a backup older than the landing meets when the provider's events are sent again. It cannot
/// be rebuilt without the token's landing, so it is said as money not reported, never ignored as another product's.
@Suite("Payment flow: a checkout this ledger does not know")
struct PaymentFlowUnknownCheckoutTests {
    @Test func aPaymentOfAnUnknownCheckoutIsSaidLoudly() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let lost = PaymentHarness.Checkout(
            path: "/checkout/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            id: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            cookie: "",
            csrf: "",
            externalPurchaseId: "SANDBOX_lost-after-the-backup"
        )
        let completed = StripeEvents.sessionCompleted(
            id: "evt_lost",
            session: "cs_test_lost",
            checkout: lost,
            product: "pro.monthly",
            mode: "subscription",
            total: 399,
            tax: 0,
            country: "DE",
            paymentIntent: "pi_lost",
            subscription: "sub_lost",
            created: Clock.system.nowSeconds()
        )
        #expect(try harness.deliver(completed).status == 200)
        try harness.waitForEvents()
        let ledger = harness.live.application.ledger
        let event = try ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10).first {
            $0.eventId == "evt_lost"
        }
        let outcome = try #require(event?.outcome)
        #expect(outcome.contains("which this ledger does not know"), "\(outcome)")
        #expect(outcome.contains("SANDBOX_lost-after-the-backup"))
        #expect(try ledger.payments.purchase(id: "cs_test_lost") == nil)
        // A warning, with the event's id, where an ignored event is only an info line (logged just after the
        // outcome is stored: polled, not a race guard).
        #expect(
            eventually(within: 10) {
                harness.live.logLines.all.contains {
                    $0.contains(#""level":"warning""#) && $0.contains("money not reported to Apple")
                        && $0.contains("evt_lost")
                }
            }
        )
    }
}

extension PaymentFlowUnknownCheckoutTests {
    /// A session linkout did not start, on a checkout it did (a payment link made by hand): the checkout says whose
    /// sale it is; the token the event's metadata names gets nothing.
    @Test func aSessionLinkoutDidNotStartGoesToItsCheckoutsToken() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let own = try harness.openCheckout()
        let other = try harness.openCheckout()
        var claimed = own
        claimed.externalPurchaseId = other.externalPurchaseId
        let completed = StripeEvents.sessionCompleted(
            id: "evt_unstarted",
            session: "cs_test_unstarted",
            checkout: claimed,
            product: "pro.lifetime",
            total: 2999,
            tax: 0,
            country: "DE",
            paymentIntent: "pi_unstarted"
        )
        #expect(try harness.deliver(completed).status == 200)
        try harness.waitForEvents()
        let ledger = harness.live.application.ledger
        #expect(try ledger.reports.lineItems(for: ExternalPurchaseID(own.externalPurchaseId)).count == 1)
        #expect(try ledger.reports.lineItems(for: ExternalPurchaseID(other.externalPurchaseId)).isEmpty)
    }
}
