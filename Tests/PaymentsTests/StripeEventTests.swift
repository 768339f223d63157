import Crypto
import Domain
import Foundation
import TestSupport
import Testing

@testable import Payments

/// Stripe events → `PaymentEvent` (docs/provider-facts.md, Stripe).
@Suite("StripeEvent")
struct StripeEventTests {
    func decode(_ text: String) throws -> StripeEvent {
        try StripeEvent.decode(Array(text.utf8))
    }

    @Test func aPaidSessionIsACompletedPurchase() throws {
        let event = try decode(StripeEventFixtures.sessionCompleted())
        #expect(event.id == "evt_session_1")
        #expect(event.type == "checkout.session.completed")
        #expect(event.created == 1_764_500_000)
        #expect(event.apiVersion == "2026-09-30.endive")
        #expect(!event.livemode)
        let expected = PurchaseCompletion(
            sessionId: "cs_test_a1",
            checkoutId: "chk_abc",
            externalPurchaseId: "0000-epid",
            bundleId: "com.example",
            productId: "pro.lifetime",
            mode: .payment,
            currency: "EUR",
            amountSubtotal: 2999,
            amountTax: 479,
            amountTotal: 2999,
            customerCountry: "DE",
            paymentIntentId: "pi_123",
            completedAt: 1_764_500_000_000
        )
        #expect(event.payload == .purchaseCompleted(expected))
    }

    @Test func asyncSuccessAndSubscriptionsToo() throws {
        let event = try decode(
            StripeEventFixtures.sessionCompleted(type: "checkout.session.async_payment_succeeded", mode: "subscription")
        )
        guard case .purchaseCompleted(let completion) = event.payload else {
            Issue.record("expected a completion")
            return
        }
        #expect(completion.mode == .subscription)
        #expect(completion.subscriptionId == "sub_123")
        #expect(completion.invoiceId == "in_first")
        #expect(completion.paymentIntentId == nil)
        let free = try decode(StripeEventFixtures.sessionCompleted(paymentStatus: "no_payment_required", total: 0))
        guard case .purchaseCompleted = free.payload else {
            Issue.record("no_payment_required completes")
            return
        }
    }

    @Test func anUnpaidSessionIsPendingAndFailuresAndExpiriesReportNothing() throws {
        let reference = PaymentEvent.SessionReference(sessionId: "cs_test_a1", checkoutId: "chk_abc")
        #expect(
            try decode(StripeEventFixtures.sessionCompleted(paymentStatus: "unpaid")).payload
                == .purchasePending(reference)
        )
        #expect(
            try decode(StripeEventFixtures.sessionCompleted(type: "checkout.session.async_payment_failed")).payload
                == .purchaseFailed(reference)
        )
        #expect(try decode(StripeEventFixtures.sessionExpired).payload == .sessionExpired(reference))
    }

    @Test func aRenewalInvoice() throws {
        let event = try decode(StripeEventFixtures.invoicePaid())
        let expected = InvoicePayment(
            invoiceId: "in_renew1",
            subscriptionId: "sub_123",
            billingReason: "subscription_cycle",
            externalPurchaseId: "0000-epid",
            bundleId: "com.example",
            productId: "pro.monthly",
            currency: "EUR",
            totalExcludingTax: 839,
            tax: 160,
            total: 999,
            amountPaid: 999,
            period: SubscriptionPeriod(start: 1_767_178_400_000, end: 1_769_856_800_000),
            customerCountry: "AT",
            paymentIntentId: "pi_renew1",
            paidAt: 1_767_178_400_000
        )
        #expect(event.payload == .renewalPaid(expected))
    }

    @Test func theFirstInvoiceOnlyLendsItsPeriod() throws {
        let event = try decode(StripeEventFixtures.invoicePaid(billingReason: "subscription_create"))
        guard case .firstInvoicePaid(let invoice) = event.payload else {
            Issue.record("expected the first invoice")
            return
        }
        #expect(invoice.period.days == 31)
        // A manual invoice is money linkout does not report: it says so, with the reason.
        guard
            case .notReported(let type, let reason) = try decode(
                StripeEventFixtures.invoicePaid(billingReason: "manual")
            )
            .payload
        else {
            Issue.record("expected a manual invoice to be money not reported")
            return
        }
        #expect(type == "invoice.paid (manual)")
        #expect(reason.hasPrefix("a manual invoice"))
    }

    @Test func invoicesBeforeBasil() throws {
        guard case .renewalPaid(let invoice) = try decode(StripeEventFixtures.invoicePaidBeforeBasil).payload else {
            Issue.record("expected a renewal")
            return
        }
        #expect(invoice.subscriptionId == "sub_old")
        #expect(invoice.tax == 100)
        #expect(invoice.totalExcludingTax == 999)
        #expect(invoice.paymentIntentId == "pi_old")
        #expect(invoice.productId == "pro.monthly")
        #expect(invoice.currency == "USD")
    }

    @Test func aRefundCarriesTheCumulativeAmount() throws {
        let event = try decode(StripeEventFixtures.chargeRefunded(amountRefunded: 1000, refunded: false))
        let expected = Refund(
            id: nil,
            kind: .refund,
            amount: .refundedSoFar(1000, fully: false),
            paymentId: "pi_123",
            chargeId: "ch_1",
            currency: "EUR",
            refundedAt: 1_765_000_000_000,
            externalPurchaseId: "0000-epid",
            productId: "pro.lifetime"
        )
        #expect(event.payload == .refunded(expected))
    }

    @Test func subscriptionEndsAndOtherTypesAreIgnored() throws {
        #expect(
            try decode(StripeEventFixtures.subscriptionDeleted).payload
                == .subscriptionEnded(
                    .init(subscriptionId: "sub_123", endedAt: 1_770_000_000_000, externalPurchaseId: "0000-epid")
                )
        )
        let other = #"{"id":"evt_x","created":1,"type":"customer.created","data":{"object":{"id":"cus_1"}}}"#
        #expect(try decode(other).payload == .ignored(type: "customer.created"))
    }

    @Test func malformedEventsNameTheField() throws {
        #expect(throws: ProviderJSONError.notJSON) { try decode("not json") }
        #expect(throws: ProviderJSONError.notJSON) { try decode("[1,2]") }
        #expect(throws: ProviderJSONError.missingField("id")) { try decode(#"{"type":"x","created":1}"#) }
        #expect(throws: ProviderJSONError.missingField("data")) {
            try decode(#"{"id":"e","type":"charge.refunded","created":1}"#)
        }
        #expect(throws: ProviderJSONError.wrongType("data.object.amount_total")) {
            try decode(
                StripeEventFixtures.sessionCompleted().replacingOccurrences(
                    of: #""amount_total":2999"#,
                    with: #""amount_total":29.99"#
                )
            )
        }
        // A whole number past what linkout reads says so (it said "the wrong type" of a JSON integer).
        for huge in ["99999999999999", "9223372036854775807", "-9223372036854775808", "100000000000000000000"] {
            #expect(throws: ProviderJSONError.outOfRange("data.object.amount_total")) {
                try decode(
                    StripeEventFixtures.sessionCompleted().replacingOccurrences(
                        of: #""amount_total":2999"#,
                        with: #""amount_total":\#(huge)"#
                    )
                )
            }
        }
        // A currency is three letters: an empty one, or one with a NUL, was held for a rate that never comes.
        for currency in ["", "eu", "eur\\u0000", "e1r", "euro"] {
            #expect(throws: ProviderJSONError.notACurrency("data.object.currency"), "\(currency)") {
                try decode(
                    StripeEventFixtures.sessionCompleted().replacingOccurrences(
                        of: #""currency":"eur""#,
                        with: #""currency":"\#(currency)""#
                    )
                )
            }
        }
        // More refunded than the charge took is no event Stripe sends: it told Apple the whole charge went back.
        #expect(throws: ProviderJSONError.moreThan("data.object.amount_refunded", "amount")) {
            try decode(StripeEventFixtures.chargeRefunded(amountRefunded: 3000, refunded: true))
        }
        _ = try decode(StripeEventFixtures.chargeRefunded(amountRefunded: 2999, refunded: true))  // all of it: read
        // An id is the provider's shape: not empty, no bidi override, no `/`, not thousands of characters.
        for id in ["", "\\u202ecs_x", "cs/../x", "cs x", String(repeating: "c", count: 256)] {
            #expect(throws: ProviderJSONError.notAnId("data.object.id"), "\(id)") {
                try decode(
                    StripeEventFixtures.sessionCompleted().replacingOccurrences(
                        of: #""id":"cs_test_a1""#,
                        with: #""id":"\#(id)""#
                    )
                )
            }
        }
        // A price or plan is only compared: a legacy plan's id is the developer's own (`pro.monthly`).
        let plan = ProviderJSON(["plan": "pro.monthly", "price": ["id": "price_1"]], path: "data.object")
        #expect(try plan.optionalReference("plan") == "pro.monthly")
        #expect(try plan.optionalReference("price") == "price_1")
        #expect(throws: ProviderJSONError.notAnId("data.object.plan")) { try plan.optionalID("plan") }
        // Validly signed but negative: never a paid purchase, a negative renewal or a refund that adds money.
        #expect(throws: ProviderJSONError.negative("data.object.amount_total")) {
            try decode(
                StripeEventFixtures.sessionCompleted().replacingOccurrences(
                    of: #""amount_total":2999"#,
                    with: #""amount_total":-2999"#
                )
            )
        }
        #expect(throws: ProviderJSONError.negative("data.object.amount_paid")) {
            try decode(
                StripeEventFixtures.invoicePaid().replacingOccurrences(
                    of: #""amount_paid":999"#,
                    with: #""amount_paid":-999"#
                )
            )
        }
        #expect(throws: ProviderJSONError.negative("data.object.amount_refunded")) {
            try decode(StripeEventFixtures.chargeRefunded(amountRefunded: -1000, refunded: false))
        }
        #expect(throws: ProviderJSONError.missingField("data.object.amount_refunded")) {
            try decode(
                #"{"id":"e","type":"charge.refunded","created":1,"data":{"object":{"id":"ch","amount":1,"currency":"eur"}}}"#
            )
        }
    }
}

/// A delivery from the fake server, end to end: signature checked over the raw bytes, then decoded.
@Suite("Signed webhook delivery")
struct SignedWebhookDeliveryTests {
    @Test func aSignedDeliveryVerifiesAndDecodes() throws {
        let secret = "whsec_fake_endpoint_secret"
        let delivery = FakeStripeServer.signedDelivery(
            event: StripeEventFixtures.chargeRefunded(amountRefunded: 2999, refunded: true),
            secret: secret,
            timestamp: 1_765_000_000
        )
        let verifier = TimestampedHMAC.stripe(secret: secret)
        try verifier.verify(header: delivery.header, body: delivery.body, nowSeconds: 1_765_000_030)
        let event = try StripeEvent.decode(delivery.body)
        guard case .refunded(let refund) = event.payload else {
            Issue.record("expected a refund")
            return
        }
        #expect(refund.amount == .refundedSoFar(2999, fully: true))
        #expect(!delivery.header.contains(secret))
    }
}

/// Plan changes and disputes (Stripe API reference: The Invoice object, Update a subscription, The Dispute object).
extension StripeEventTests {
    static let planChange = """
        {"id":"evt_update","object":"event","api_version":"2026-09-30.endive","created":1767178400,\
        "livemode":false,"type":"invoice.paid","data":{"object":{"id":"in_up","object":"invoice",\
        "billing_reason":"subscription_update","currency":"eur","amount_paid":0,"total":-150,\
        "total_excluding_tax":-126,"total_taxes":[{"amount":-24,"tax_behavior":"inclusive"}],\
        "parent":{"type":"subscription_details","subscription_details":{"subscription":"sub_123",\
        "metadata":{"product_id":"pro.monthly"}}},"lines":{"data":[\
        {"id":"il_unused","amount":-450,"period":{"start":1767178400,"end":1768388000}},\
        {"id":"il_rest","amount":300,"period":{"start":1767178400,"end":1768388000}},\
        {"id":"il_next","amount":0,"period":{"start":1768388000,"end":1771066400}}]}}}}
        """

    @Test func aPlanChangeMayCarryNegativeAmounts() throws {
        guard case .subscriptionChanged(let invoice) = try decode(Self.planChange).payload else {
            Issue.record("expected a plan change")
            return
        }
        #expect(invoice.invoiceId == "in_up")
        #expect(invoice.subscriptionId == "sub_123")
        #expect(invoice.total == -150)
        #expect(invoice.tax == -24)
        #expect(invoice.totalExcludingTax == -126)
        // The span of all its lines: the proration and the new period.
        #expect(invoice.period == SubscriptionPeriod(start: 1_767_178_400_000, end: 1_771_066_400_000))
        // Everywhere else a negative amount is still a broken payload.
        let renewal = Self.planChange.replacingOccurrences(of: "subscription_update", with: "subscription_cycle")
        #expect(throws: ProviderJSONError.negative("data.object.total_taxes[0].amount")) { try decode(renewal) }
    }

    /// A yearly plan changed to a monthly one ten days in: the credit runs to the old year's end, the new plan's
    /// line a month. The month is what the invoice pays for (the credit counted as service added about a year of
    /// paid days to every later renewal).
    @Test func aDowngradesPeriodIsItsChargedLinesNotTheOldPlansCredit() throws {
        let change: Int64 = 1_767_178_400
        let downgrade = Self.planChange.replacingOccurrences(
            of: #"{"id":"il_unused","amount":-450,"period":{"start":1767178400,"end":1768388000}},"#
                + #"{"id":"il_rest","amount":300,"period":{"start":1767178400,"end":1768388000}},"#
                + #"{"id":"il_next","amount":0,"period":{"start":1768388000,"end":1771066400}}"#,
            with: #"{"id":"il_unused","amount":-3500,"period":{"start":\#(change),"end":\#(change + 355 * 86_400)}},"#
                + #"{"id":"il_month","amount":399,"period":{"start":\#(change),"end":\#(change + 31 * 86_400)}}"#
        )
        #expect(downgrade != Self.planChange)
        guard case .subscriptionChanged(let invoice) = try decode(downgrade).payload else {
            Issue.record("expected a plan change")
            return
        }
        #expect(invoice.period == SubscriptionPeriod(start: change * 1000, end: (change + 31 * 86_400) * 1000))
        // Only credits (a refund-like change): their span, as before.
        let credits = Self.planChange.replacingOccurrences(of: #""amount":300"#, with: #""amount":-300"#)
            .replacingOccurrences(of: #""amount":0,"#, with: #""amount":-1,"#)
        guard case .subscriptionChanged(let credited) = try decode(credits).payload else {
            Issue.record("expected a plan change")
            return
        }
        #expect(credited.period == SubscriptionPeriod(start: 1_767_178_400_000, end: 1_771_066_400_000))
    }

    /// `invoice_payment.paid` names the payment of an invoice and what it paid of it (the customer's credit may
    /// have paid the rest): the payment's record is then what it charged.
    @Test func anInvoicePaymentSaysWhatItPaid() throws {
        let link = """
            {"id":"evt_ip","created":1767178400,"type":"invoice_payment.paid","data":{"object":{"id":"inpay_1",\
            "invoice":"in_first","amount_paid":250,"amount_requested":399,\
            "payment":{"type":"payment_intent","payment_intent":"pi_9"}}}}
            """
        #expect(
            try decode(link).payload
                == .invoicePaymentLinked(invoiceId: "in_first", paymentIntentId: "pi_9", amountPaid: 250)
        )
        let unpaid = link.replacingOccurrences(of: #""amount_paid":250,"#, with: "")
        #expect(
            try decode(unpaid).payload
                == .invoicePaymentLinked(invoiceId: "in_first", paymentIntentId: "pi_9", amountPaid: nil)
        )
        // The tax of what it paid: the same share of the invoice's (0.64 of 3.99, 2.50 paid: 0.40).
        #expect(TaxShare.of(64, in: 399, part: 250) == 40)
        #expect(TaxShare.of(64, in: 399, part: 399) == 64 && TaxShare.of(64, in: 399, part: 0) == 0)
        #expect(TaxShare.of(1_000_000_000_000, in: 1_000_000_000_000, part: 999_999_999_999) == 999_999_999_999)
    }

    static func disputeClosed(status: String) -> String {
        """
        {"id":"evt_dispute","object":"event","created":1767178400,"type":"charge.dispute.closed",\
        "data":{"object":{"id":"dp_1","object":"dispute","amount":2999,"charge":"ch_1","currency":"eur",\
        "payment_intent":"pi_123","reason":"fraudulent","status":"\(status)"}}}
        """
    }

    @Test func aLostDisputeIsAChargebackAndAWonOneMovedNothing() throws {
        #expect(
            try decode(Self.disputeClosed(status: "lost")).payload
                == .refunded(
                    Refund(
                        id: "dp_1",
                        kind: .chargeback,
                        amount: .this(2999, tax: nil),
                        paymentId: "pi_123",
                        chargeId: "ch_1",
                        currency: "EUR",
                        refundedAt: 1_767_178_400_000
                    )
                )
        )
        #expect(
            try decode(Self.disputeClosed(status: "won")).payload
                == .ignored(type: "charge.dispute.closed (won): the money stayed with the seller")
        )
        let negative = Self.disputeClosed(status: "lost").replacingOccurrences(of: "2999", with: "-1")
        #expect(throws: ProviderJSONError.negative("data.object.amount")) { try decode(negative) }
    }
}
