import Domain

/// A refund as the mapper reports it, whichever way its provider stated it (`Refund.Amount`): the charge's
/// refunded total after it, so the caller, who knows what it already reported, works out what is new. Amounts in
/// the provider's minor units.
struct ChargeRefund: Sendable, Equatable {
    /// The provider's charge object (Stripe's `ch_…`, else the payment): the line item is named after it.
    var chargeId: String
    /// The payment's name as its charge was recorded.
    var paymentId: String
    /// Refunded of the charge so far, this refund included.
    var amountRefunded: Int64
    /// ISO 4217, upper case.
    var currency: CurrencyCode
    /// True only once the whole amount is refunded.
    var fullyRefunded: Bool
    /// When it was refunded, UNIX ms.
    var refundedAt: Int64
    /// Set when the money went back through a lost dispute (a chargeback) rather than a refund: the line item
    /// is then keyed on the dispute, which happens once per dispute.
    var disputeId: String?
    /// Set when the refund is a record of its own with an id (a Paddle adjustment): the line item is keyed on
    /// it, since the cumulative amount can repeat once a reversed chargeback lowered it.
    var refundId: String?
    /// The tax refunded of the payment as the provider states it (Paddle's adjustment `totals.tax`), so far without
    /// this refund and with it. Nil when the provider gives no tax of its own (Stripe's charge): the tax is then
    /// split in proportion to the buy's.
    var statedTax: StatedTax?

    struct StatedTax: Sendable, Equatable {
        var before: Int64
        var after: Int64
    }

    init(
        chargeId: String,
        paymentId: String,
        amountRefunded: Int64,
        currency: CurrencyCode,
        fullyRefunded: Bool,
        refundedAt: Int64,
        disputeId: String? = nil,
        refundId: String? = nil,
        statedTax: StatedTax? = nil
    ) {
        self.chargeId = chargeId
        self.paymentId = paymentId
        self.amountRefunded = amountRefunded
        self.currency = currency.uppercased()
        self.fullyRefunded = fullyRefunded
        self.refundedAt = refundedAt
        self.disputeId = disputeId
        self.refundId = refundId
        self.statedTax = statedTax
    }
}
