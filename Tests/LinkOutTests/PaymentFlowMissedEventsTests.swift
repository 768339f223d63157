import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// Events that used to be missed: a plan change with no invoice is a subscription event Apple wants reported even
/// without a payment; money linkout does not report says so in the event's outcome and the log, never silently.
@Suite("Payment flow: events that were missed")
struct PaymentFlowMissedEventsTests {
    /// `customer.subscription.updated` after a price change (`previous_attributes.items`), made at `created`.
    /// `invoiced`: Stripe billed the change at once (`latest_invoice` moved too).
    static func subscriptionUpdated(
        id: String,
        product: String,
        price: String,
        previousPrice: String,
        periodEnd: Int64,
        created: Int64,
        invoiced: Bool = false
    ) -> String {
        """
        {"id":"\(id)","object":"event","api_version":"2026-09-30.endive","created":\(created),\
        "livemode":false,"type":"customer.subscription.updated","data":{"object":{"id":"sub_1",\
        "object":"subscription","status":"active","currency":"eur","latest_invoice":"in_1",\
        "metadata":{"product_id":"\(product)"},"items":{"object":"list","data":[{"id":"si_1",\
        "price":{"id":"\(price)"},"current_period_start":\(created - 86_400),"current_period_end":\(periodEnd)}]}},\
        "previous_attributes":{"items":{"object":"list","data":[{"id":"si_1","price":{"id":"\(previousPrice)"},\
        "current_period_start":\(created - 86_400),"current_period_end":\(periodEnd)}]}\
        \(invoiced ? #","latest_invoice":"in_0""# : "")}}}
        """
    }

    /// A price change with `proration_behavior` `none` (or pending invoice items) makes no invoice: before, it
    /// was ignored, and Apple never heard of the new product. Now a `SUBSCRIPTION_CHANGE` of 0, once however often
    /// delivered, with the paid days carried on; the next renewal counts the changed plan's days as paid.
    @Test func aPlanChangeWithoutAnInvoiceIsASubscriptionChangeOfZero() throws {
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
        let changed = time.clock.nowSeconds()
        let change = Self.subscriptionUpdated(
            id: "evt_change",
            product: "pro.monthly.plus",
            price: "price_plus",
            previousPrice: "price_pro",
            periodEnd: periodEnd,
            created: changed
        )
        for _ in 0..<2 { #expect(try harness.deliver(change, timestamp: changed).status == 200) }
        // A change billed at once is reported from its invoice, not from this event.
        let invoiced = Self.subscriptionUpdated(
            id: "evt_invoiced",
            product: "pro.monthly.plus",
            price: "price_plus",
            previousPrice: "price_pro",
            periodEnd: periodEnd,
            created: changed,
            invoiced: true
        )
        #expect(try harness.deliver(invoiced, timestamp: changed).status == 200)
        // An update that leaves the price as it was (a quantity, metadata or cancellation change) is no plan change.
        let same = Self.subscriptionUpdated(
            id: "evt_same",
            product: "pro.monthly.plus",
            price: "price_plus",
            previousPrice: "price_plus",
            periodEnd: periodEnd,
            created: changed
        )
        #expect(try harness.deliver(same, timestamp: changed).status == 200)
        try harness.waitForEvents()

        time.advance(seconds: periodEnd + 600 - changed)
        let renewal = StripeEvents.renewal(
            id: "evt_in_2",
            invoice: "in_2",
            subscription: "sub_1",
            total: 599,
            start: periodEnd,
            end: periodEnd + 30 * 86_400,
            created: time.clock.nowSeconds(),
            paymentIntent: "pi_in_2"
        )
        #expect(try harness.deliver(renewal, timestamp: time.clock.nowSeconds()).status == 200)
        try harness.waitForEvents()

        let items = harness.reportedLineItems()
        #expect(items.map { $0["lineItemId"] as? String } == ["cs_test_fake1", "evt_change", "in_2"])
        let reported = try #require(items.first { $0["lineItemId"] as? String == "evt_change" })
        #expect(
            try PaymentHarness.canonical(reported)
                == #"{"amountTaxExclusive":0,"amountTaxInclusive":0,"creationDate":0,"eventType":"BUY","lineItemId":"evt_change","netAmountTaxExclusive":0,"pricingCurrency":"EUR","productIdentifier":"pro.monthly.plus","productType":"SUBSCRIPTION","quantity":1,"referenceLineItemId":"cs_test_fake1","reportingCurrency":"EUR","subscriptionDaysOfPaidService":10,"subscriptionEndDate":\#(periodEnd * 1000),"subscriptionEvent":"SUBSCRIPTION_CHANGE","subscriptionStartDate":\#(changed * 1000),"taxAmount":0,"taxCountry":"DEU"}"#
        )
        #expect(reported["creationDate"] as? Int64 == changed * 1000)
        let renewed = try #require(items.last)
        let changedDays = SubscriptionPeriod(start: changed * 1000, end: periodEnd * 1000).days
        #expect(renewed["subscriptionDaysOfPaidService"] as? Int == 10 + Int(changedDays))
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
        let outcomes = try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 50)
        for ignored in ["evt_invoiced", "evt_same"] {
            #expect(outcomes.first { $0.eventId == ignored }?.outcome == "ignored (customer.subscription.updated)")
        }
    }

    /// Stripe's manual and usage-threshold invoices and a refund that failed after it was reported move money
    /// linkout does not report: before, each was "ignored" like an unrelated event; now the outcome (and a
    /// warning in the log) says it is money, why it is not reported, and what a person can do.
    @Test func stripeMoneyLinkoutDoesNotReportSaysWhy() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let now = Clock.system.nowSeconds()
        func invoice(_ id: String, reason: String) -> String {
            """
            {"id":"evt_\(id)","object":"event","api_version":"2026-09-30.endive","created":\(now),\
            "livemode":false,"type":"invoice.paid","data":{"object":{"id":"\(id)","object":"invoice",\
            "billing_reason":"\(reason)","currency":"eur","amount_paid":500,"total":500,"total_taxes":[],\
            "parent":null,"lines":{"data":[{"id":"il_1","period":{"start":\(now),"end":\(now)}}]}}}}
            """
        }
        let failed = """
            {"id":"evt_refund_failed","object":"event","api_version":"2026-09-30.endive","created":\(now),\
            "livemode":false,"type":"refund.failed","data":{"object":{"id":"re_1","object":"refund",\
            "amount":399,"charge":"ch_1","payment_intent":"pi_1","currency":"eur","status":"failed",\
            "failure_reason":"expired_or_canceled_card"}}}
            """
        for body in [
            invoice("in_manual", reason: "manual"), invoice("in_usage", reason: "subscription_threshold"), failed,
        ] {
            #expect(try harness.deliver(body).status == 200)
        }
        try harness.waitForEvents()
        let outcomes = try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 50)
        func outcome(_ id: String) -> String { outcomes.first { $0.eventId == id }?.outcome ?? "" }
        #expect(outcome("evt_in_manual").hasPrefix("not reported to Apple: invoice.paid (manual): a manual invoice"))
        #expect(outcome("evt_in_usage").contains("usage-threshold invoice"))
        #expect(outcome("evt_refund_failed").hasPrefix("not reported to Apple: refund.failed: refund re_1 of ch_1"))
        #expect(outcome("evt_refund_failed").contains("linkout report retract"))
        #expect(harness.reportedLineItems().isEmpty)
    }

    /// A Paddle one-off charge on a subscription (`origin` `subscription_charge`) is money: before, its outcome
    /// was "ignored"; now it says why it is not reported.
    @Test func aPaddleSubscriptionChargeSaysWhyItIsNotReported() throws {
        let harness = try PaddleFlowTests.Harness()
        let checkout = try harness.payments.openCheckout()
        let custom = harness.custom(checkout, product: "pro.monthly")
        let charge = PaddleFixtures.transaction(
            eventId: "evt_01charge",
            occurredAt: PaddleFlowTests.time(Clock.system.nowSeconds()),
            transactionId: "txn_01charge",
            origin: "subscription_charge",
            subscriptionId: "sub_01x",
            currency: "EUR",
            totals: .init(subtotal: 840, tax: 160, total: 1000),
            customData: custom
        )
        harness.paddle.addTransaction("txn_01charge", customData: custom)
        #expect(try harness.deliver(charge).status == 200)
        try harness.payments.waitForEvents()
        let outcomes = try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 50)
        let outcome = outcomes.first { $0.eventId == "evt_01charge" }?.outcome ?? ""
        #expect(outcome.hasPrefix("not reported to Apple: transaction.completed (origin subscription_charge): "))
        #expect(harness.payments.reportedLineItems().isEmpty)
    }

    /// A Paddle plan change whose transaction names no `billing_period`: before, it was not reported; now it is a
    /// `SUBSCRIPTION_CHANGE` from its payment to the end of the subscription's current period.
    @Test func aPaddlePlanChangeWithoutABillingPeriodRunsToTheCurrentPeriodsEnd() throws {
        let harness = try PaddleFlowTests.Harness()
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.monthly", checkout)
        let now = Clock.system.nowSeconds()
        let day: Int64 = 86_400
        let custom = harness.custom(checkout, product: "pro.monthly")
        let start = PaddleFixtures.transaction(
            eventId: "evt_09start",
            occurredAt: PaddleFlowTests.time(now - 2),
            transactionId: transaction,
            origin: "web",
            subscriptionId: "sub_09x",
            currency: "EUR",
            totals: .init(subtotal: 335, tax: 64, total: 399),
            customData: custom,
            billingPeriod: (PaddleFlowTests.time(now - 10 * day), PaddleFlowTests.time(now + 20 * day))
        )
        let change = PaddleFixtures.transaction(
            eventId: "evt_09change",
            occurredAt: PaddleFlowTests.time(now),
            transactionId: "txn_09change",
            origin: "subscription_update",
            subscriptionId: "sub_09x",
            currency: "EUR",
            totals: .init(subtotal: 210, tax: 40, total: 250),
            customData: custom
        )
        harness.paddle.addTransaction("txn_09change", customData: custom)
        for body in [start, change] {
            #expect(try harness.deliver(body).status == 200)
            try harness.payments.waitForEvents()
        }
        let items = harness.payments.reportedLineItems()
        let reported = try #require(items.last)
        #expect(items.count == 2)
        #expect(reported["lineItemId"] as? String == "txn_09change")
        #expect(reported["subscriptionEvent"] as? String == "SUBSCRIPTION_CHANGE")
        #expect(reported["amountTaxInclusive"] as? Int == 2500)
        #expect(reported["subscriptionStartDate"] as? Int64 == now * 1000)
        #expect(reported["subscriptionEndDate"] as? Int64 == (now + 20 * day) * 1000)
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// A Paddle plan change billed later or not at all (`do_not_bill`, `prorated_next_billing_period`) makes only
    /// a `subscription.updated`, which does not say what changed: before, its outcome was a bare "ignored"; now
    /// it says such a change is not reported, and the README says why.
    @Test func aPaddlePlanChangeWithoutATransactionSaysItIsNotReported() throws {
        let harness = try PaddleFlowTests.Harness()
        let updated = """
            {"event_id":"evt_01upd","event_type":"subscription.updated",\
            "occurred_at":"\(PaddleFlowTests.time(Clock.system.nowSeconds()))","notification_id":"ntf_01upd",\
            "data":{"id":"sub_01x","status":"active","items":[{"price":{"id":"pri_plus"},"quantity":1}],\
            "custom_data":null}}
            """
        #expect(try harness.deliver(updated).status == 200)
        try harness.payments.waitForEvents()
        let outcomes = try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 50)
        let outcome = outcomes.first { $0.eventId == "evt_01upd" }?.outcome ?? ""
        #expect(outcome.contains("a plan change Paddle bills later or not at all is not reported"))
        #expect(harness.payments.reportedLineItems().isEmpty)
    }
}
