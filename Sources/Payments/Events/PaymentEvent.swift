public import Domain

/// What a provider's event means for linkout, independent of how the provider spells it: each provider decodes
/// its own events into these (`PaymentProvider.decodeEvent`), and the mapper sees nothing else. The application
/// stores the raw event first (deduplicated by provider and event id), then acts on this. The words are neutral;
/// Stripe's names are given as examples.
public enum PaymentEvent: Sendable, Equatable {
    /// Paid (or nothing to pay): report a buy. A one-time purchase or the start of a subscription (its first
    /// period in `PurchaseCompletion.period` when the provider says it).
    case purchaseCompleted(PurchaseCompletion)
    /// The checkout completed with a payment that has not cleared yet (Stripe: `payment_status` `unpaid`):
    /// nothing to report until it is paid.
    case purchasePending(SessionReference)
    /// A delayed payment failed: nothing to report.
    case purchaseFailed(SessionReference)
    /// The payment session ended unpaid: it expired, or the person cancelled it.
    case sessionExpired(SessionReference)
    /// The first payment of a subscription when the provider sends it apart from the checkout's completion
    /// (Stripe's `subscription_create` invoice). Not reported: the completion was the start. It carries the
    /// first period, which the start's line item needs, and the payment a later refund names.
    case firstInvoicePaid(InvoicePayment)
    /// A renewal, with the period it paid for: report a `RENEWAL`.
    case renewalPaid(InvoicePayment)
    /// A plan change was billed (prorated; the amount may be negative when the change is a credit): report a
    /// `SUBSCRIPTION_CHANGE`, paid days carried on.
    case subscriptionChanged(InvoicePayment)
    /// Money went back to the customer: a refund, or a chargeback (a dispute the customer won). Report a `REFUND`
    /// of what is new (`Refund.Amount` says how the provider states it).
    case refunded(Refund)
    /// A chargeback was reversed (Paddle's `chargeback_reverse`): the money went back to the seller, so the
    /// `REFUND` reported for the chargeback is retracted at Apple (the same line item again, `restatement` and
    /// `erroneouslySubmitted` true, as `linkout report retract` makes it), once Apple has accepted it.
    case chargebackReversed(ChargebackReversal)
    /// The subscription ended (Stripe: `customer.subscription.deleted`): no more renewals; the developer's backend
    /// gets `subscription.ended`.
    case subscriptionEnded(SubscriptionEnd)
    /// Links a subscription payment to the name a later refund uses for it (Stripe's `invoice_payment.paid`: since
    /// API version basil neither the invoice nor the charge names the other), with what it paid of the invoice
    /// (`amount_paid`, when Stripe says: the customer's credit may have paid the rest).
    case invoicePaymentLinked(invoiceId: String, paymentIntentId: String, amountPaid: Int64?)
    /// Anything else (other event types, other billing reasons): stored, acknowledged, not acted on.
    case ignored(type: String)
    /// Money moved, and linkout does not report it to Apple: `reason` says why and what a person can do. Logged
    /// as a warning and kept as the event's outcome, so it is never silent (README, "What linkout reports").
    case notReported(type: String, reason: String)

    /// A session named by an event that reports nothing.
    public struct SessionReference: Sendable, Equatable {
        public var sessionId: String
        /// linkout's checkout id (Stripe: `client_reference_id`).
        public var checkoutId: CheckoutID?

        public init(sessionId: String, checkoutId: CheckoutID?) {
            self.sessionId = sessionId
            self.checkoutId = checkoutId
        }
    }

    public struct SubscriptionEnd: Sendable, Equatable {
        public var subscriptionId: String
        /// When it ended, UNIX ms, when the provider says.
        public var endedAt: Int64?
        public var externalPurchaseId: ExternalPurchaseID?

        public init(subscriptionId: String, endedAt: Int64?, externalPurchaseId: ExternalPurchaseID?) {
            self.subscriptionId = subscriptionId
            self.endedAt = endedAt
            self.externalPurchaseId = externalPurchaseId
        }
    }
}
