public import Domain

/// One paid charge of a purchase (the buy, or a renewal) with the Apple line item that reported it, so a refund
/// of that charge can reference it and report only what is newly refunded.
public struct PurchaseCharge: Sendable, Equatable, Codable {
    /// The provider's payment reference (Stripe: the PaymentIntent id).
    public var chargeKey: ChargeKey
    public var purchaseId: String
    public var lineItemId: LineItemID
    public var amountTotal: Int64
    public var amountTax: Int64
    /// Refunded so far (the provider reports a cumulative figure). On the marker of a refund or chargeback of its
    /// own (`ChargeKey.refund`): the part of its amount the payment's refunded total did not take
    /// (`countedAmount`), 0 for markers stored before it was kept.
    public var amountRefunded: Int64
    public var createdAt: Int64

    /// What a refund's or chargeback's marker added to the payment's refunded total: its amount, less what the
    /// total could not take (a chargeback of the whole payment after a partial refund takes only what was left).
    public var countedAmount: Int64 { max(0, amountTotal - amountRefunded) }

    /// Marks a chargeback's reversal as taken (`ChargeKey.reversal`), not money.
    public var isReversal: Bool {
        if case .reversal = chargeKey { return true }
        return false
    }

    public init(
        chargeKey: ChargeKey,
        purchaseId: String,
        lineItemId: LineItemID,
        amountTotal: Int64,
        amountTax: Int64,
        amountRefunded: Int64,
        createdAt: Int64
    ) {
        self.chargeKey = chargeKey
        self.purchaseId = purchaseId
        self.lineItemId = lineItemId
        self.amountTotal = amountTotal
        self.amountTax = amountTax
        self.amountRefunded = amountRefunded
        self.createdAt = createdAt
    }
}
