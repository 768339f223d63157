public import Domain

/// A charge refunded in full or in part (`charge.refunded`, Stripe API reference: The Charge object). `amountRefunded`
/// is cumulative over all refunds of the charge, so the caller, who knows what it already reported, works out what is
/// new. Amounts in Stripe minor units.
public struct ChargeRefund: Sendable, Equatable {
    /// `ch_…` (or `py_…`).
    public var chargeId: String
    /// `payment_intent`: finds the purchase (one-time) or the invoice (renewal) that was refunded.
    public var paymentIntentId: String?
    /// `amount`: what was charged.
    public var amount: Int64
    /// `amount_refunded`: refunded so far, this refund included.
    public var amountRefunded: Int64
    /// ISO 4217, upper case.
    public var currency: CurrencyCode
    /// `refunded`: true only once the whole amount is refunded.
    public var fullyRefunded: Bool
    /// The charge's metadata, which the checkout put on its PaymentIntent (one-time purchases).
    public var externalPurchaseId: ExternalPurchaseID?
    public var productId: ProductID?
    /// When it was refunded, UNIX ms (the event's `created`).
    public var refundedAt: Int64
    /// Set when the money went back through a lost dispute (a chargeback) rather than a refund: the line item
    /// is then keyed on the dispute, which happens once per dispute.
    public var disputeId: String?
    /// Set when the refund is a record of its own with an id (a Paddle adjustment): the line item is keyed on
    /// it, since the cumulative amount can repeat once a reversed chargeback lowered it.
    public var refundId: String?
    /// The tax refunded of the payment as the provider states it (Paddle's adjustment `totals.tax`), so far without
    /// this refund and with it. Nil when the provider gives no tax of its own (Stripe's charge): the tax is then
    /// split in proportion to the buy's.
    public var statedTax: StatedTax?

    public struct StatedTax: Sendable, Equatable {
        public var before: Int64
        public var after: Int64

        public init(before: Int64, after: Int64) {
            self.before = before
            self.after = after
        }
    }

    public init(
        chargeId: String,
        paymentIntentId: String?,
        amount: Int64,
        amountRefunded: Int64,
        currency: CurrencyCode,
        fullyRefunded: Bool,
        externalPurchaseId: ExternalPurchaseID? = nil,
        productId: ProductID? = nil,
        refundedAt: Int64,
        disputeId: String? = nil,
        refundId: String? = nil,
        statedTax: StatedTax? = nil
    ) {
        self.chargeId = chargeId
        self.paymentIntentId = paymentIntentId
        self.amount = amount
        self.amountRefunded = amountRefunded
        self.currency = currency.uppercased()
        self.fullyRefunded = fullyRefunded
        self.externalPurchaseId = externalPurchaseId
        self.productId = productId
        self.refundedAt = refundedAt
        self.disputeId = disputeId
        self.refundId = refundId
        self.statedTax = statedTax
    }
}
