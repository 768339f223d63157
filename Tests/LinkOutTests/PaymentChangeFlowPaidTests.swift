import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// What the person paid, end to end: signed Stripe events into `POST /webhooks/stripe`, line items out to the
/// fake Apple, which checks every rule of Apple's linkout knows.
@Suite("Payment flow: what the person paid")
struct PaymentChangeFlowPaidTests {
    /// `invoice.paid` with `billing_reason` `subscription_update`, made at `created` (UNIX seconds).
    static func planChange(invoice: String, total: Int64, tax: Int64, start: Int64, end: Int64, created: Int64)
        -> String
    {
        """
        {"id":"evt_\(invoice)","object":"event","api_version":"2026-09-30.endive","created":\(created),\
        "livemode":false,"type":"invoice.paid","data":{"object":{"id":"\(invoice)","object":"invoice",\
        "billing_reason":"subscription_update","currency":"eur","amount_paid":\(max(total, 0)),"total":\(total),\
        "total_excluding_tax":\(total - tax),"total_taxes":[{"amount":\(tax),"tax_behavior":"inclusive"}],\
        "customer_address":{"country":"DE"},"parent":{"type":"subscription_details","subscription_details":\
        {"subscription":"sub_1","metadata":{"product_id":"pro.monthly"}}},"lines":{"data":[\
        {"id":"il_credit","amount":\(total),"period":{"start":\(start),"end":\(end)},\
        "parent":{"type":"subscription_item_details","subscription_item_details":{"proration":true}}}]}}}}
        """
    }

    /// A renewal paid partly from the customer's credit balance (`starting_balance` below zero), with a
    /// proration line of an earlier change before the new cycle's line, paid at `paidAt` and announced at
    /// `created` (UNIX seconds).
    static func creditedRenewal(
        total: Int64,
        tax: Int64,
        paid: Int64,
        proration: (start: Int64, end: Int64),
        cycle: (start: Int64, end: Int64),
        paidAt: Int64,
        created: Int64
    ) -> String {
        """
        {"id":"evt_in_2","object":"event","api_version":"2026-09-30.endive","created":\(created),\
        "livemode":false,"type":"invoice.paid","data":{"object":{"id":"in_2","object":"invoice",\
        "billing_reason":"subscription_cycle","currency":"eur","amount_paid":\(paid),"total":\(total),\
        "starting_balance":\(paid - total),"ending_balance":0,"total_excluding_tax":\(total - tax),\
        "total_taxes":[{"amount":\(tax),"tax_behavior":"inclusive"}],"customer_address":{"country":"DE"},\
        "status_transitions":{"finalized_at":\(paidAt - 3600),"paid_at":\(paidAt)},\
        "parent":{"type":"subscription_details","subscription_details":{"subscription":"sub_1","metadata":{}}},\
        "lines":{"data":[\
        {"id":"il_proration","amount":0,"period":{"start":\(proration.start),"end":\(proration.end)},\
        "parent":{"type":"subscription_item_details","subscription_item_details":{"proration":true}}},\
        {"id":"il_cycle","amount":\(total),"period":{"start":\(cycle.start),"end":\(cycle.end)},\
        "parent":{"type":"subscription_item_details","subscription_item_details":{"proration":false}}}]}}}}
        """
    }

    /// A downgrade credits more than it costs (the invoice totals −1.50, clamped to 0 at Apple); the next
    /// renewal costs 3.99 but the credit balance pays 1.50 of it. Before, the renewal went to Apple as 3.99, the
    /// downgrade's twenty paid days were not counted, the period was the proration line's (the old one), and
    /// its date was the event's, three days after the payment.
    @Test func aRenewalPaidPartlyFromCreditReportsWhatWasChargedAndCountsTheCreditedDays() throws {
        let time = ManualClock(startingAt: Clock.system.nowMilliseconds() - 45 * 86_400_000)
        let harness = try PaymentHarness(provider: .stripe, clock: time.clock)
        let token = TokenMinter.mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: true,
            tokenType: nil,
            nowMilliseconds: time.clock.nowMilliseconds() - 60_000
        )
        try PaymentChangeFlowRefundHoldTests.subscribe(harness, on: token, time: time)
        let purchase = try #require(try harness.live.application.ledger.payments.purchase(id: "cs_test_fake1"))
        let periodEnd = try #require(purchase.periodEnd) / 1000

        time.advance(seconds: 10 * 86_400)
        let downgrade = time.clock.nowSeconds()
        let change = Self.planChange(
            invoice: "in_down",
            total: -150,
            tax: -24,
            start: downgrade,
            end: periodEnd,
            created: downgrade
        )
        #expect(try harness.deliver(change, timestamp: downgrade).status == 200)
        try harness.waitForEvents()

        // Paid an hour into the new period; the event comes three days later (as a slow payment's can).
        let paidAt = periodEnd + 3600
        time.advance(seconds: paidAt + 3 * 86_400 - downgrade)
        let renewal = Self.creditedRenewal(
            total: 399,
            tax: 64,
            paid: 249,
            proration: (downgrade, periodEnd),
            cycle: (periodEnd, periodEnd + 30 * 86_400),
            paidAt: paidAt,
            created: time.clock.nowSeconds()
        )
        #expect(try harness.deliver(renewal, timestamp: time.clock.nowSeconds()).status == 200)
        try harness.waitForEvents()

        let items = harness.reportedLineItems()
        #expect(items.map { $0["lineItemId"] as? String } == ["cs_test_fake1", "in_down", "in_2"])
        let renewed = try #require(items.last)
        // 2.49 charged; the tax is the same share of 0.64: 0.64 × 2.49 / 3.99 = 0.399.
        #expect(renewed["amountTaxInclusive"] as? Int == 2490)
        #expect(renewed["taxAmount"] as? Int == 399)
        #expect(renewed["amountTaxExclusive"] as? Int == 2091)
        #expect(renewed["netAmountTaxExclusive"] as? Int == 2091)
        // Ten days of the first plan, then the downgrade's days to the period's end, paid with its credit.
        let creditedDays = SubscriptionPeriod(start: downgrade * 1000, end: periodEnd * 1000).days
        #expect(creditedDays >= 17)
        #expect(renewed["subscriptionDaysOfPaidService"] as? Int == 10 + Int(creditedDays))
        #expect(renewed["subscriptionStartDate"] as? Int64 == periodEnd * 1000)
        #expect(renewed["subscriptionEndDate"] as? Int64 == (periodEnd + 30 * 86_400) * 1000)
        #expect(renewed["creationDate"] as? Int64 == paidAt * 1000)
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// A SEPA debit clears three days after the person completed the checkout. Apple's `creationDate` is when the
    /// customer authorized the purchase: before, the buy was dated when the money arrived.
    /// In order, the pending completion linkout recorded dates it; out of order (the clearing delivered first),
    /// the session linkout started for the person does, never the day the money arrived.
    @Test(arguments: [false, true])
    func aDelayedPaymentIsDatedWhenThePersonCompletedTheCheckout(clearingFirst: Bool) throws {
        let time = ManualClock(startingAt: Clock.system.nowMilliseconds() - 10 * 86_400_000)
        let harness = try PaymentHarness(provider: .stripe, clock: time.clock)
        let token = TokenMinter.mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: true,
            tokenType: nil,
            nowMilliseconds: time.clock.nowMilliseconds() - 60_000
        )
        let checkout = try harness.openCheckout(token: token)
        #expect(try harness.choose(checkout, product: "pro.lifetime", currency: "EUR").status == 303)
        func session(_ type: String, status: String) -> String {
            StripeEvents.sessionCompleted(
                id: "evt_\(status)",
                session: "cs_test_fake1",
                checkout: checkout,
                product: "pro.lifetime",
                total: 2999,
                tax: 479,
                country: "DE",
                paymentIntent: "pi_1",
                created: time.clock.nowSeconds()
            )
            .replacingOccurrences(of: #""type":"checkout.session.completed""#, with: #""type":"\#(type)""#)
            .replacingOccurrences(of: #""payment_status":"paid""#, with: #""payment_status":"\#(status)""#)
        }
        let completedAt = time.clock.nowMilliseconds()
        let completed = session("checkout.session.completed", status: "unpaid")
        if !clearingFirst {
            #expect(try harness.deliver(completed, timestamp: time.clock.nowSeconds()).status == 200)
            try harness.waitForEvents()
        }

        time.advance(seconds: 3 * 86_400)
        let cleared = session("checkout.session.async_payment_succeeded", status: "paid")
        #expect(try harness.deliver(cleared, timestamp: time.clock.nowSeconds()).status == 200)
        try harness.waitForEvents()

        let items = harness.reportedLineItems()
        #expect(items.map { $0["lineItemId"] as? String } == ["cs_test_fake1"])
        #expect(items.first?["creationDate"] as? Int64 == completedAt)
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }
}
