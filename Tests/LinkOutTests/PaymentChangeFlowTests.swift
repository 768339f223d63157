import Domain
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// Revenue Stripe reports outside renewals and refunds, end to end: signed webhooks into the real server, line
/// items out through the real libcurl client to the fake Apple on 127.0.0.1.
@Suite("Payment flow: plan changes and disputes")
struct PaymentChangeFlowTests {
    /// `invoice.paid` with `billing_reason` `subscription_update`, as Stripe sends a plan change: proration
    /// lines that credit the unused time of the old plan (below zero) and charge the rest of the new one.
    static func planChange(id: String, invoice: String, total: Int64, tax: Int64, start: Int64, end: Int64) -> String {
        """
        {"id":"\(id)","object":"event","api_version":"2026-09-30.endive","created":\(Clock.system.nowSeconds()),\
        "livemode":false,"type":"invoice.paid","data":{"object":{"id":"\(invoice)","object":"invoice",\
        "billing_reason":"subscription_update","currency":"eur","amount_paid":\(max(total, 0)),"total":\(total),\
        "total_excluding_tax":\(total - tax),"total_taxes":[{"amount":\(tax),"tax_behavior":"inclusive"}],\
        "customer_address":{"country":"DE"},"parent":{"type":"subscription_details","subscription_details":\
        {"subscription":"sub_1","metadata":{"product_id":"pro.monthly"}}},"lines":{"data":[\
        {"id":"il_unused","amount":-300,"period":{"start":\(start),"end":\(end)}},\
        {"id":"il_remaining","amount":\(total + 300),"period":{"start":\(start),"end":\(end)}}]}}}}
        """
    }

    static func disputeClosed(id: String, dispute: String, status: String, amount: Int64) -> String {
        """
        {"id":"\(id)","object":"event","api_version":"2026-09-30.endive","created":\(Clock.system.nowSeconds()),\
        "livemode":false,"type":"charge.dispute.closed","data":{"object":{"id":"\(dispute)","object":"dispute",\
        "amount":\(amount),"charge":"ch_1","currency":"eur","payment_intent":"pi_1","reason":"fraudulent",\
        "status":"\(status)","is_charge_refundable":false}}}
        """
    }

    @Test func planChangesAreReportedAsSubscriptionChangesWithPaidDaysCarriedOn() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let checkout = try harness.openCheckout()
        #expect(try harness.choose(checkout, product: "pro.monthly", currency: "EUR").status == 303)
        let completed = StripeEvents.sessionCompleted(
            id: "evt_start",
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.monthly",
            mode: "subscription",
            total: 399,
            tax: 0,
            country: "DE",
            subscription: "sub_1"
        )
        #expect(try harness.deliver(completed).status == 200)
        try harness.waitForEvents()
        let purchase = try #require(try harness.live.application.ledger.payments.purchase(id: "cs_test_fake1"))
        let periodEnd = try #require(purchase.periodEnd)
        let started = purchase.createdAt
        // Ten days in, an upgrade: 3.00 credited, 5.50 charged, 0.40 of it tax.
        let upgrade = started / 1000 + 10 * 86_400
        #expect(
            try harness.deliver(
                Self.planChange(
                    id: "evt_up",
                    invoice: "in_up",
                    total: 250,
                    tax: 40,
                    start: upgrade,
                    end: periodEnd / 1000
                )
            ).status == 200
        )
        try harness.waitForEvents()
        // Five days later a downgrade: the credit exceeds the charge, the invoice totals −1.50, nothing is paid.
        let downgrade = upgrade + 5 * 86_400
        #expect(
            try harness.deliver(
                Self.planChange(
                    id: "evt_down",
                    invoice: "in_down",
                    total: -150,
                    tax: -24,
                    start: downgrade,
                    end: periodEnd / 1000
                )
            ).status == 200
        )
        try harness.waitForEvents()
        let items = try harness.reportedLineItems().map { try PaymentHarness.canonical($0) }
        #expect(items.count == 3)
        #expect(
            Array(items.dropFirst()) == [
                #"{"amountTaxExclusive":2100,"amountTaxInclusive":2500,"creationDate":0,"eventType":"BUY","lineItemId":"in_up","netAmountTaxExclusive":2100,"pricingCurrency":"EUR","productIdentifier":"pro.monthly","productType":"SUBSCRIPTION","quantity":1,"referenceLineItemId":"cs_test_fake1","reportingCurrency":"EUR","subscriptionDaysOfPaidService":10,"subscriptionEndDate":\#(periodEnd),"subscriptionEvent":"SUBSCRIPTION_CHANGE","subscriptionStartDate":\#(upgrade * 1000),"taxAmount":400,"taxCountry":"DEU"}"#,
                #"{"amountTaxExclusive":0,"amountTaxInclusive":0,"creationDate":0,"eventType":"BUY","lineItemId":"in_down","netAmountTaxExclusive":0,"pricingCurrency":"EUR","productIdentifier":"pro.monthly","productType":"SUBSCRIPTION","quantity":1,"referenceLineItemId":"cs_test_fake1","reportingCurrency":"EUR","subscriptionDaysOfPaidService":15,"subscriptionEndDate":\#(periodEnd),"subscriptionEvent":"SUBSCRIPTION_CHANGE","subscriptionStartDate":\#(downgrade * 1000),"taxAmount":0,"taxCountry":"DEU"}"#,
            ]
        )
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    @Test func aLostDisputeIsReportedAsARefundAndAWonOneIsNot() throws {
        let harness = try PaymentHarness(provider: .stripe)
        _ = try harness.paidLifetime(tax: 479, country: "ES")
        // An earlier dispute the seller won: the money stayed with the seller, nothing goes to Apple.
        let won = Self.disputeClosed(id: "evt_won", dispute: "dp_0", status: "won", amount: 2999)
        #expect(try harness.deliver(won).status == 200)
        try harness.waitForEvents()
        #expect(try harness.live.application.ledger.payments.purchase(id: "cs_test_fake1")?.status == .paid)
        let lost = Self.disputeClosed(id: "evt_lost", dispute: "dp_1", status: "lost", amount: 2999)
        // Delivered twice: one chargeback, one line item.
        for _ in 0..<2 { #expect(try harness.deliver(lost).status == 200) }
        try harness.waitForEvents()
        let items = try harness.reportedLineItems().map { try PaymentHarness.canonical($0) }
        #expect(
            items == [
                #"{"amountTaxExclusive":25200,"amountTaxInclusive":29990,"creationDate":0,"eventType":"BUY","lineItemId":"cs_test_fake1","netAmountTaxExclusive":25200,"pricingCurrency":"EUR","productIdentifier":"pro.lifetime","productType":"ONE_TIME_BUY","quantity":1,"reportingCurrency":"EUR","taxAmount":4790,"taxCountry":"ESP"}"#,
                #"{"amountTaxExclusive":25200,"amountTaxInclusive":29990,"creationDate":0,"eventType":"REFUND","lineItemId":"ch_1:dispute:dp_1","netAmountTaxExclusive":0,"pricingCurrency":"EUR","referenceLineItemId":"cs_test_fake1","reportingCurrency":"EUR","taxAmount":4790,"taxCountry":"ESP"}"#,
            ]
        )
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
        #expect(try harness.live.application.ledger.payments.purchase(id: "cs_test_fake1")?.status == .refunded)
    }

    /// Stripe's `amount_refunded` counts refunds only, and events come in no set order: a lost dispute of 19.99
    /// delivered twice (two event ids) is one chargeback, and a refund of 10.00 that comes after it is reported in
    /// full (before, the dispute was counted twice, the purchase marked refunded after 19.99, and the refund taken
    /// for one already recorded and lost).
    @Test func aRefundDeliveredAfterALostDisputeIsReportedAndTheDisputeCountsOnce() throws {
        let harness = try PaymentHarness(provider: .stripe)
        _ = try harness.paidLifetime(tax: 479, country: "ES")
        for id in ["evt_lost", "evt_lost_again"] {
            let lost = Self.disputeClosed(id: id, dispute: "dp_1", status: "lost", amount: 1999)
            #expect(try harness.deliver(lost).status == 200)
            try harness.waitForEvents()
        }
        let ledger = harness.live.application.ledger
        #expect(try ledger.payments.purchase(id: "cs_test_fake1")?.status == .partiallyRefunded)
        let refund = StripeEvents.refunded(
            id: "evt_refund",
            charge: "ch_1",
            paymentIntent: "pi_1",
            amount: 2999,
            refunded: 1000
        )
        #expect(try harness.deliver(refund).status == 200)
        try harness.waitForEvents()
        let items = harness.reportedLineItems()
        #expect(
            items.map { $0["lineItemId"] as? String } == ["cs_test_fake1", "ch_1:dispute:dp_1", "ch_1:refund:1000"]
        )
        #expect(items.map { $0["amountTaxInclusive"] as? Int } == [29990, 19990, 10000])
        // All of it back: nothing stands of the buy.
        #expect(items.last?["netAmountTaxExclusive"] as? Int == 0)
        #expect(try ledger.payments.purchase(id: "cs_test_fake1")?.status == .refunded)
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }
}

extension PaymentChangeFlowTests {
    /// A renewal Stripe names the payment of later (`invoice_payment.paid`), 2.50 of its 3.99 paid and the customer's
    /// credit the rest: the payment's record is what it paid, all a refund or dispute of it can take back; the
    /// invoice's keeps the period's price.
    @Test func aPaymentNamedAfterItsInvoiceIsRecordedAtWhatItPaid() throws {
        let time = ManualClock(startingAt: Clock.system.nowMilliseconds() - 3_600_000)
        let harness = try PaymentHarness(provider: .stripe, clock: time.clock)
        let start = time.clock.nowMilliseconds()
        let token = PaymentHarness.servicesToken(createdAt: start - 60_000, expiresAt: start + 60 * 86_400_000)
        try PaymentChangeFlowRefundHoldTests.subscribe(harness, on: token, time: time)
        let renewedAt = time.clock.nowSeconds()
        let renewal = StripeEvents.renewal(
            id: "evt_in_2",
            invoice: "in_2",
            subscription: "sub_1",
            total: 399,
            start: renewedAt,
            end: renewedAt + 30 * 86_400,
            created: renewedAt
        ).replacingOccurrences(of: #""amount_paid":399"#, with: #""amount_paid":250"#)
        #expect(renewal.contains(#""amount_paid":250"#))
        #expect(try harness.deliver(renewal, timestamp: renewedAt).status == 200)
        try harness.waitForEvents()
        let link = """
            {"id":"evt_link2","object":"event","type":"invoice_payment.paid","created":\(renewedAt),"livemode":false,\
            "data":{"object":{"id":"inpay_2","object":"invoice_payment","invoice":"in_2","amount_paid":250,\
            "payment":{"type":"payment_intent","payment_intent":"pi_in_2"},"status":"paid"}}}
            """
        #expect(try harness.deliver(link, timestamp: renewedAt).status == 200)
        try harness.waitForEvents()
        let ledger = harness.live.application.ledger
        let payment = try #require(try ledger.payments.charge(key: .payment("pi_in_2")))
        #expect(payment.amountTotal == 250 && payment.amountTax == 0, "\(payment)")
        #expect(try ledger.payments.charge(key: .invoice("in_2"))?.amountTotal == 399)
    }
}
