public import Domain

/// A chargeback undone by the card network: the provider's record of the reversal and the payment it concerns.
public struct ChargebackReversal: Sendable, Equatable {
    /// The reversal's own id (`adj_…`).
    public var reversalId: String
    /// The payment charged back (`txn_…`).
    public var paymentId: String
    /// The amount given back to the seller, tax included.
    public var amount: Int64
    /// The amount's currency.
    public var currency: CurrencyCode
    /// UNIX ms.
    public var reversedAt: Int64

    public init(reversalId: String, paymentId: String, amount: Int64, currency: CurrencyCode, reversedAt: Int64) {
        self.reversalId = reversalId
        self.paymentId = paymentId
        self.amount = amount
        self.currency = currency
        self.reversedAt = reversedAt
    }
}
