/// What a provider's event means for linkout, independent of how the provider spells it. The application
/// stores the raw event first (deduplicated by its id), then acts on this.
public enum PaymentEvent: Sendable, Equatable {
    /// Paid (or nothing to pay): report a buy. A one-time purchase or the start of a subscription.
    case purchaseCompleted(PurchaseCompletion)
    /// The session completed with a delayed payment method that has not paid yet (`payment_status` `unpaid`):
    /// nothing to report until `…async_payment_succeeded` arrives.
    case purchasePending(SessionReference)
    /// A delayed payment failed (`checkout.session.async_payment_failed`): nothing to report.
    case purchaseFailed(SessionReference)
    /// The session expired unpaid (`checkout.session.expired`).
    case sessionExpired(SessionReference)
    /// The first invoice of a subscription (`subscription_create`). Not reported: the session completion is the
    /// start. It carries the first period, which the start's line item needs.
    case firstInvoicePaid(InvoicePayment)
    /// A renewal (`subscription_cycle`): report a `RENEWAL`.
    case renewalPaid(InvoicePayment)
    /// A plan change or proration was paid (`subscription_update`): report a `SUBSCRIPTION_CHANGE`.
    case subscriptionChanged(InvoicePayment)
    /// A charge was refunded, fully or partly: report a refund of the new part.
    case refunded(ChargeRefund)
    /// A dispute closed (`charge.dispute.closed`): lost, a chargeback reported as a refund; won, nothing.
    case disputeClosed(DisputeClosure)
    /// A refund or chargeback that is a record of its own (Paddle's adjustments): its amount is this one alone, and
    /// its id makes it once, however often it is delivered. Report a `REFUND` of it.
    case refundIssued(IssuedRefund)
    /// A chargeback was reversed (Paddle's `chargeback_reverse`): the money went back to the seller, so the
    /// `REFUND` reported for the chargeback is withdrawn.
    case chargebackReversed(ChargebackReversal)
    /// The subscription ended (`customer.subscription.deleted`): no more renewals.
    case subscriptionEnded(SubscriptionEnd)
    /// A subscription invoice was paid by this PaymentIntent (`invoice_payment.paid`). Since API version basil
    /// neither the invoice nor the charge names the other, so this is how a refund of a subscription payment
    /// finds the line item it refunds.
    case invoicePaymentLinked(invoiceId: String, paymentIntentId: String)
    /// Anything else (other event types, other billing reasons such as `manual`): acknowledged, not acted on.
    case ignored(type: String)

    /// A session named by an event that reports nothing.
    public struct SessionReference: Sendable, Equatable {
        public var sessionId: String
        /// linkout's checkout id (`client_reference_id`).
        public var checkoutId: String?

        public init(sessionId: String, checkoutId: String?) {
            self.sessionId = sessionId
            self.checkoutId = checkoutId
        }
    }

    public struct SubscriptionEnd: Sendable, Equatable {
        public var subscriptionId: String
        /// `ended_at` in UNIX ms, when Stripe gives it.
        public var endedAt: Int64?
        public var externalPurchaseId: String?

        public init(subscriptionId: String, endedAt: Int64?, externalPurchaseId: String?) {
            self.subscriptionId = subscriptionId
            self.endedAt = endedAt
            self.externalPurchaseId = externalPurchaseId
        }
    }
}
