/// Paddle's adjustment entity (Paddle API reference: Adjustments): a refund or credit asked for by the seller, or a
/// chargeback and its reversal, which Paddle creates. Each adjustment is its own record with its own id and amounts
/// (not a running total, unlike Stripe's `amount_refunded`).
public struct PaddleAdjustment: Sendable, Equatable {
    /// `adj_…`.
    public var id: String
    /// `refund`, `credit`, `chargeback`, `chargeback_warning`, `chargeback_reverse`, `chargeback_warning_reverse`.
    public var action: String
    /// `pending_approval`, `approved`, `rejected`, `reversed`. Most live refunds wait for Paddle's approval.
    public var status: String
    /// The transaction adjusted.
    public var transactionId: String
    public var subscriptionId: String?
    /// ISO 4217, upper case.
    public var currency: String
    /// `totals.total`: the amount, tax included, in the lowest denomination. Positive in every published example; read
    /// as a magnitude, since the action says which way the money goes (Paddle does not document the signs, so this is
    /// not confirmed).
    public var total: Int64
    /// `totals.tax`, likewise.
    public var tax: Int64

    public init(
        id: String,
        action: String,
        status: String,
        transactionId: String,
        subscriptionId: String?,
        currency: String,
        total: Int64,
        tax: Int64
    ) {
        self.id = id
        self.action = action
        self.status = status
        self.transactionId = transactionId
        self.subscriptionId = subscriptionId
        self.currency = currency.uppercased()
        self.total = total
        self.tax = tax
    }

    init(_ object: ProviderJSON) throws(ProviderJSONError) {
        let totals = try object.child("totals")
        // Bounded by ±10^12 (`paddleSignedAmount`), so `abs` cannot overflow.
        let total = try totals.paddleSignedAmount("total")
        let tax = try totals.paddleSignedAmount("tax")
        var currency = try totals.optionalCurrency("currency_code")
        if currency == nil { currency = try object.currency("currency_code") }
        self.init(
            id: try object.id("id"),
            action: try object.string("action"),
            status: try object.string("status"),
            transactionId: try object.id("transaction_id"),
            subscriptionId: try object.optionalID("subscription_id"),
            currency: currency ?? "",
            total: abs(total),
            tax: abs(tax)
        )
    }
}
