public import Domain

/// A dispute (chargeback) that reached its end (`charge.dispute.closed`). Stripe's dispute object: `id`
/// (`dp_…`), `charge`, `payment_intent`, `amount` (the disputed amount, in the charge's currency and minor
/// units; usually the whole charge), `currency`, `status` (`won`, `lost`, or `warning_closed` for an inquiry
/// that never became a chargeback).
///
/// Only a lost dispute moves money back to the customer for good: Apple reports chargebacks as `REFUND` (Apple:
/// "Reporting tokens with transactions", "RefundLineItem"). The funds Stripe withdraws while a dispute is open
/// (`charge.dispute.funds_withdrawn`) come back when it is won (`…funds_reinstated`), so that hold is not a refund:
/// reporting it would need a retraction after a win (a restatement with `erroneouslySubmitted`, possible for a year
/// only). linkout reports at the close, once.
public struct DisputeClosure: Sendable, Equatable {
    public var disputeId: String
    /// `ch_…` (or `py_…`).
    public var chargeId: String
    /// Finds the purchase (one-time) or the invoice (renewal) that was disputed, as for a refund.
    public var paymentIntentId: String?
    /// Stripe minor units.
    public var amount: Int64
    /// ISO 4217, upper case.
    public var currency: CurrencyCode
    public var status: String
    /// When it closed, UNIX ms (the event's `created`).
    public var closedAt: Int64

    public init(
        disputeId: String,
        chargeId: String,
        paymentIntentId: String?,
        amount: Int64,
        currency: CurrencyCode,
        status: String,
        closedAt: Int64
    ) {
        self.disputeId = disputeId
        self.chargeId = chargeId
        self.paymentIntentId = paymentIntentId
        self.amount = amount
        self.currency = currency.uppercased()
        self.status = status
        self.closedAt = closedAt
    }

    /// The customer keeps the money: a chargeback.
    public var isLost: Bool { status == "lost" }
}
