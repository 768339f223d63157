public import Domain

/// A refund or chargeback that a provider keeps as its own record (Paddle's adjustments, Paddle API reference:
/// Adjustments), unlike Stripe's charge, whose `amount_refunded` is a running total (`ChargeRefund`). Amounts are in
/// the lowest denomination of `currency`, this refund alone.
public struct IssuedRefund: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        case refund
        /// Apple reports chargebacks as `REFUND` too (Apple: "Reporting tokens with transactions", "RefundLineItem").
        case chargeback
    }

    /// The provider's id of the refund (`adj_…`): it is made once, and its Apple line item is keyed on it.
    public var refundId: String
    /// The payment refunded (`txn_…`): the purchase's or renewal's charge is recorded under it.
    public var paymentId: String
    public var kind: Kind
    /// Tax included.
    public var amount: Int64
    public var tax: Int64
    /// ISO 4217, upper case.
    public var currency: CurrencyCode
    /// UNIX ms.
    public var refundedAt: Int64

    public init(
        refundId: String,
        paymentId: String,
        kind: Kind,
        amount: Int64,
        tax: Int64,
        currency: CurrencyCode,
        refundedAt: Int64
    ) {
        self.refundId = refundId
        self.paymentId = paymentId
        self.kind = kind
        self.amount = amount
        self.tax = tax
        self.currency = currency.uppercased()
        self.refundedAt = refundedAt
    }
}

/// A chargeback undone by the card network: the provider's record of the reversal and the payment it concerns.
public struct ChargebackReversal: Sendable, Equatable {
    /// The reversal's own id (`adj_…`).
    public var reversalId: String
    /// The payment charged back (`txn_…`).
    public var paymentId: String
    /// The amount given back to the seller, tax included.
    public var amount: Int64
    /// UNIX ms.
    public var reversedAt: Int64

    public init(reversalId: String, paymentId: String, amount: Int64, reversedAt: Int64) {
        self.reversalId = reversalId
        self.paymentId = paymentId
        self.amount = amount
        self.reversedAt = reversedAt
    }
}
