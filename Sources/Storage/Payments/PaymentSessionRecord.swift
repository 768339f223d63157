public import Domain

/// A payment started for a checkout: the provider's session, which our intent created it (the idempotency
/// key), and where it stands. An open session holds back the token's `NO_LINE_ITEM` report while the payment
/// may still complete.
public struct PaymentSessionRecord: Sendable, Equatable, Codable {
    public var sessionId: String
    /// `demo` or `stripe`.
    public var provider: ProviderID
    public var intentId: String
    public var checkoutId: CheckoutID
    public var externalPurchaseId: ExternalPurchaseID?
    public var productId: ProductID
    public var currency: CurrencyCode
    /// Decimal text, as in the catalog (`"29.99"`).
    public var amount: String
    public var language: String
    /// Where the person pays (the provider's page).
    public var url: String
    public var state: PaymentSessionState
    public var createdAt: Int64
    public var updatedAt: Int64
    /// A keyed hash of the browser session that started the payment: only that browser is shown the purchase's
    /// redemption code, so a shared or previewed result link gives nothing away.
    public var browserHash: String?

    public init(
        sessionId: String,
        provider: ProviderID,
        intentId: String,
        checkoutId: CheckoutID,
        externalPurchaseId: ExternalPurchaseID?,
        productId: ProductID,
        currency: CurrencyCode,
        amount: String,
        language: String,
        url: String,
        state: PaymentSessionState,
        createdAt: Int64,
        updatedAt: Int64,
        browserHash: String? = nil
    ) {
        self.sessionId = sessionId
        self.provider = provider
        self.intentId = intentId
        self.checkoutId = checkoutId
        self.externalPurchaseId = externalPurchaseId
        self.productId = productId
        self.currency = currency
        self.amount = amount
        self.language = language
        self.url = url
        self.state = state
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.browserHash = browserHash
    }
}
