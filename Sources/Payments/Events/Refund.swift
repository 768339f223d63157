public import Domain

/// Money given back on a paid charge, as its provider reports it: a refund, or a chargeback (a dispute the
/// customer won), which Apple takes as a `REFUND` too (Apple: "Reporting tokens with transactions",
/// "RefundLineItem"). Providers state the amount in one of two ways (`Amount`); the rest is the same fact.
public struct Refund: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        case refund
        case chargeback
    }

    public enum Amount: Sendable, Equatable {
        /// The charge's refunded total so far, this refund included, and whether that is all of it (Stripe's
        /// charge: `amount_refunded`, `refunded`). Only what is new is reported, so a late delivery changes
        /// nothing.
        case refundedSoFar(Int64, fully: Bool)
        /// This refund alone, on top of what was refunded before (a lost Stripe dispute's `amount`, a Paddle
        /// adjustment's total), with the tax in it when the provider states it (Paddle's `totals.tax`; else the
        /// tax is split in the buy's proportion). Made once, by `id`.
        case this(Int64, tax: Int64?)
    }

    /// The provider's id of this refund when it is a record of its own (`adj_…`, `dp_…`); nil for a running
    /// total.
    public var id: String?
    public var kind: Kind
    public var amount: Amount
    /// The payment refunded, under the name its charge was recorded with (Stripe: the PaymentIntent, else the
    /// charge; Paddle: the transaction).
    public var paymentId: String
    /// The provider's charge object (Stripe's `ch_…`, else the payment): the refund's Apple line item is named
    /// after it.
    public var chargeId: String
    /// ISO 4217, upper case.
    public var currency: CurrencyCode
    /// UNIX ms.
    public var refundedAt: Int64
    /// The charge's metadata, which the checkout put on its PaymentIntent (Stripe's one-time purchases).
    public var externalPurchaseId: ExternalPurchaseID?
    public var productId: ProductID?

    public init(
        id: String?,
        kind: Kind,
        amount: Amount,
        paymentId: String,
        chargeId: String? = nil,
        currency: CurrencyCode,
        refundedAt: Int64,
        externalPurchaseId: ExternalPurchaseID? = nil,
        productId: ProductID? = nil
    ) {
        self.id = id
        self.kind = kind
        self.amount = amount
        self.paymentId = paymentId
        self.chargeId = chargeId ?? paymentId
        self.currency = currency.uppercased()
        self.refundedAt = refundedAt
        self.externalPurchaseId = externalPurchaseId
        self.productId = productId
    }
}
