import Domain
import Foundation
import TestSupport
import Testing

@testable import Payments

/// Paddle notifications → `PaymentEvent` (docs/provider-facts.md, Paddle; `PaddleNotification+PaymentEvent.swift`).
@Suite("PaddleNotification")
struct PaddleNotificationTests {
    let custom = [
        "linkout_checkout_id": "chk_1", "linkout_intent_id": "int_1", "external_purchase_id": "SANDBOX-epid",
        "bundle_id": "com.example", "product_id": "pro.lifetime",
    ]

    func decode(_ body: String) throws -> PaddleNotification {
        try PaddleNotification.decode(Array(body.utf8))
    }

    @Test func aOneTimeBuyIsAPurchaseWithGrandTotalAndItsTax() throws {
        let body = PaddleFixtures.transaction(
            eventId: "evt_01a",
            occurredAt: "2026-05-02T10:18:49.738971Z",
            transactionId: "txn_01a",
            totals: .init(subtotal: 999, tax: 89, total: 1088),
            customData: custom
        )
        let notification = try decode(body)
        #expect(notification.eventId == "evt_01a")
        #expect(notification.occurredAt == 1_777_717_129_738)
        guard case .purchaseCompleted(let completion) = notification.paymentEvent else {
            Issue.record("not a purchase: \(notification.paymentEvent)")
            return
        }
        #expect(completion.sessionId == "txn_01a")
        #expect(completion.paymentIntentId == "txn_01a")
        #expect(completion.mode == .payment)
        #expect(completion.amountTotal == 1088)
        #expect(completion.amountTax == 89)
        #expect(completion.amountSubtotal == 999)
        #expect(completion.currency == "USD")
        #expect(completion.checkoutId == "chk_1")
        #expect(completion.externalPurchaseId == "SANDBOX-epid")
        #expect(completion.productId == "pro.lifetime")
        #expect(completion.customerCountry == nil)
        #expect(completion.completedAt == 1_777_717_129_738)
    }

    @Test func aSubscriptionsFirstTransactionIsItsStartWithThePaidPeriod() throws {
        let body = PaddleFixtures.transaction(
            eventId: "evt_01b",
            occurredAt: "2026-05-02T10:18:49Z",
            transactionId: "txn_01b",
            origin: "web",
            subscriptionId: "sub_01b",
            totals: .init(subtotal: 416, tax: 83, total: 499),
            customData: custom,
            billingPeriod: ("2026-05-02T10:18:47Z", "2026-06-02T10:18:47Z")
        )
        guard case .purchaseCompleted(let completion) = try decode(body).paymentEvent else {
            Issue.record("not a purchase")
            return
        }
        #expect(completion.mode == .subscription)
        #expect(completion.subscriptionId == "sub_01b")
        #expect(completion.period == SubscriptionPeriod(start: 1_777_717_127_000, end: 1_780_395_527_000))
    }

    /// Paddle copies `custom_data` onto a subscription's later transactions: a one-off charge or a card update
    /// names the same checkout, and must not become a second purchase of it.
    @Test(arguments: ["subscription_charge", "subscription_payment_method_change"])
    func laterTransactionsOfASubscriptionAreNoBuy(origin: String) throws {
        let body = PaddleFixtures.transaction(
            eventId: "evt_01o",
            occurredAt: "2026-05-09T10:18:49Z",
            transactionId: "txn_01o",
            origin: origin,
            subscriptionId: "sub_01b",
            totals: .init(subtotal: 0, tax: 0, total: 0),
            customData: custom,
            billingPeriod: ("2026-05-02T10:18:47Z", "2026-06-02T10:18:47Z")
        )
        let event = try decode(body).paymentEvent
        if origin == "subscription_charge" {
            // A one-off charge is money: not reported, and the outcome says why.
            guard case .notReported(let type, let reason) = event else {
                Issue.record("expected money not reported, got \(event)")
                return
            }
            #expect(type == "transaction.completed (origin subscription_charge)")
            #expect(reason.contains("one-off charge"))
        } else {
            #expect(event == .ignored(type: "transaction.completed (origin \(origin))"))
        }
    }

    @Test func aRecurringTransactionIsARenewalAndAnUpdateIsAPlanChangeReadSigned() throws {
        let renewal = PaddleFixtures.transaction(
            eventId: "evt_01c",
            occurredAt: "2026-06-02T10:19:03Z",
            transactionId: "txn_01c",
            origin: "subscription_recurring",
            subscriptionId: "sub_01b",
            currency: "GBP",
            totals: .init(subtotal: 416, tax: 83, total: 499),
            customData: custom,
            billingPeriod: ("2026-06-02T10:18:47Z", "2026-07-02T10:18:47Z")
        )
        guard case .renewalPaid(let payment) = try decode(renewal).paymentEvent else {
            Issue.record("not a renewal")
            return
        }
        #expect(payment.invoiceId == "txn_01c")
        #expect(payment.subscriptionId == "sub_01b")
        #expect((payment.total, payment.tax, payment.totalExcludingTax) == (499, 83, 416))
        #expect(payment.period.start == 1_780_395_527_000)

        let downgrade = PaddleFixtures.transaction(
            eventId: "evt_01d",
            occurredAt: "2026-06-10T00:00:00Z",
            transactionId: "txn_01d",
            origin: "subscription_update",
            subscriptionId: "sub_01b",
            totals: .init(subtotal: -250, tax: -50, total: -300),
            customData: custom,
            billingPeriod: ("2026-06-10T00:00:00Z", "2026-07-02T10:18:47Z")
        )
        guard case .subscriptionChanged(let change) = try decode(downgrade).paymentEvent else {
            Issue.record("not a plan change")
            return
        }
        #expect((change.total, change.tax, change.amountPaid) == (-300, -50, 0))
    }

    /// A negative amount on anything but a plan change is broken or forged, never a sale.
    @Test func aNegativeTotalOnABuyIsRefused() {
        let body = PaddleFixtures.transaction(
            eventId: "evt_01e",
            occurredAt: "2026-05-02T10:18:49Z",
            transactionId: "txn_01e",
            totals: .init(subtotal: -1, tax: 0, total: -1),
            customData: custom
        )
        #expect(throws: ProviderJSONError.negative("data.details.totals.subtotal")) { try decode(body) }
        // Past what linkout reads: out of range, not "the wrong type" of a string of digits.
        let huge = body.replacingOccurrences(of: #""subtotal":"-1""#, with: #""subtotal":"9223372036854775807""#)
        #expect(throws: ProviderJSONError.outOfRange("data.details.totals.subtotal")) { try decode(huge) }
        // A currency is three letters.
        let blank = body.replacingOccurrences(of: #""currency_code":"USD""#, with: #""currency_code":"""#)
        #expect(throws: ProviderJSONError.notACurrency("data.details.totals.currency_code")) { try decode(blank) }
    }

    @Test func refundsCountOnlyOnceApprovedAndChargebacksAtOnce() throws {
        func event(_ action: String, _ status: String) throws -> PaymentEvent {
            try decode(
                PaddleFixtures.adjustment(
                    eventId: "evt_adj",
                    occurredAt: "2026-05-09T08:48:20.239695Z",
                    adjustmentId: "adj_01",
                    action: action,
                    status: status,
                    transactionId: "txn_01a",
                    total: 300,
                    tax: 25
                )
            ).paymentEvent
        }
        #expect(
            try event("refund", "pending_approval") == .ignored(type: "adjustment.updated (refund, pending_approval)")
        )
        #expect(try event("refund", "rejected") == .ignored(type: "adjustment.updated (refund, rejected)"))
        #expect(
            try event("refund", "approved")
                == .refunded(
                    Refund(
                        id: "adj_01",
                        kind: .refund,
                        amount: .this(300, tax: 25),
                        paymentId: "txn_01a",
                        currency: "USD",
                        refundedAt: 1_778_316_500_239
                    )
                )
        )
        guard case .refunded(let chargeback) = try event("chargeback", "approved") else {
            Issue.record("not a chargeback")
            return
        }
        #expect(chargeback.kind == .chargeback)
        guard case .chargebackReversed(let reversal) = try event("chargeback_reverse", "approved") else {
            Issue.record("not a reversal")
            return
        }
        #expect(reversal.paymentId == "txn_01a")
        #expect(try event("credit", "approved") == .ignored(type: "adjustment.updated (credit, approved)"))
        #expect(
            try event("chargeback_warning", "approved")
                == .ignored(type: "adjustment.updated (chargeback_warning, approved)")
        )
        // A chargeback first seen already reversed moved no money: no refund to report.
        #expect(try event("chargeback", "reversed") == .ignored(type: "adjustment.updated (chargeback, reversed)"))
    }

    @Test func aCanceledSubscriptionEnds() throws {
        let body = PaddleFixtures.subscriptionCanceled(
            eventId: "evt_sub",
            occurredAt: "2026-07-02T10:18:50Z",
            subscriptionId: "sub_01b",
            canceledAt: "2026-07-02T10:18:47Z",
            customData: custom
        )
        #expect(
            try decode(body).paymentEvent
                == .subscriptionEnded(
                    PaymentEvent.SubscriptionEnd(
                        subscriptionId: "sub_01b",
                        endedAt: 1_782_987_527_000,
                        externalPurchaseId: "SANDBOX-epid"
                    )
                )
        )
    }

    @Test func otherEventsAreIgnoredAndFailuresNamed() throws {
        let created =
            #"{"event_id":"evt_x","event_type":"customer.created","occurred_at":"2024-03-15T10:32:38.286848Z","data":{}}"#
        #expect(try decode(created).paymentEvent == .ignored(type: "customer.created"))
        let failed = PaddleFixtures.transaction(
            type: "transaction.payment_failed",
            eventId: "evt_f",
            occurredAt: "2026-05-02T10:18:49Z",
            transactionId: "txn_f",
            status: "ready",
            totals: .init(subtotal: 999, tax: 89, total: 1088),
            customData: custom
        )
        #expect(
            try decode(failed).paymentEvent
                == .purchasePending(PaymentEvent.SessionReference(sessionId: "txn_f", checkoutId: "chk_1"))
        )
        #expect(throws: ProviderJSONError.notJSON) { try decode("[]") }
        #expect(throws: ProviderJSONError.missingField("occurred_at")) {
            try decode(#"{"event_id":"evt_x","event_type":"customer.created"}"#)
        }
        #expect(throws: ProviderJSONError.wrongType("occurred_at")) {
            try decode(#"{"event_id":"evt_x","event_type":"customer.created","occurred_at":"yesterday"}"#)
        }
    }

    @Test func timestampsAreReadToTheMillisecond() {
        #expect(PaddleTimestamp.milliseconds("1970-01-01T00:00:00Z") == 0)
        #expect(PaddleTimestamp.milliseconds("2024-03-15T10:32:38.286848Z") == 1_710_498_758_286)
        #expect(PaddleTimestamp.milliseconds("2024-03-15T12:32:38.2+02:00") == 1_710_498_758_200)
        #expect(PaddleTimestamp.milliseconds("2024-02-29T00:00:00Z") == 1_709_164_800_000)
        #expect(PaddleTimestamp.milliseconds("2024-03-15 10:32:38Z") == nil)
        #expect(PaddleTimestamp.milliseconds("2024-03-15T10:32:38.Z") == nil)
        #expect(PaddleTimestamp.milliseconds("2024-03-15T10:32:38") == nil)
        // No real date (it was read as another: 2024-02-31 as 2024-03-02).
        for unreal in ["2024-02-31T00:00:00Z", "2023-02-29T00:00:00Z", "2024-04-31T00:00:00Z", "2024-13-01T00:00:00Z"] {
            #expect(PaddleTimestamp.milliseconds(unreal) == nil, "\(unreal)")
        }
    }
}
