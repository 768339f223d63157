public import Domain

/// A paid purchase (one-time, or a subscription from its start), keyed by the provider's session id. Amounts
/// are in the provider's minor units of `currency`; never floating point.
public struct PurchaseRecord: Sendable, Equatable, Codable {
    public var purchaseId: String
    public var provider: ProviderID
    public var checkoutId: CheckoutID?
    public var externalPurchaseId: ExternalPurchaseID?
    public var bundleId: BundleID?
    public var productId: ProductID?
    public var kind: PurchaseKind
    public var status: PurchaseStatus
    public var currency: CurrencyCode
    public var amountTotal: Int64
    public var amountTax: Int64
    /// Apple's `taxCountry` (alpha-3).
    public var taxCountry: TaxCountry
    public var subscriptionId: String?
    /// The Apple line item of the buy (a subscription's start): renewals and refunds reference it.
    public var buyLineItemId: LineItemID?

    /// The line item the buy's charges carry: the buy's, or for a buy Apple never gets (a test payment on a
    /// production token, one that cannot be reported) the purchase's own id. Its refunds find the charge and end
    /// the purchase either way; a renewal's charge carries its invoice.
    public var buyChargeLineItemId: LineItemID { buyLineItemId ?? LineItemID(purchaseId) }
    /// Whether Apple is told of it: its buy was made into a line item.
    public var isReported: Bool { buyLineItemId != nil }
    /// End of the paid period (subscriptions), UNIX ms.
    public var periodEnd: Int64?
    /// Days of paid service reported so far (Apple's `subscriptionDaysOfPaidService`).
    public var paidDays: Int64
    public var createdAt: Int64
    public var updatedAt: Int64
    /// Money changed hands: false for the demo provider and a payment provider's test mode, so the developer's
    /// backend can tell a test purchase from a sale.
    public var live: Bool

    public init(
        purchaseId: String,
        provider: ProviderID,
        checkoutId: CheckoutID?,
        externalPurchaseId: ExternalPurchaseID?,
        bundleId: BundleID?,
        productId: ProductID?,
        kind: PurchaseKind,
        status: PurchaseStatus,
        currency: CurrencyCode,
        amountTotal: Int64,
        amountTax: Int64,
        taxCountry: TaxCountry,
        subscriptionId: String?,
        buyLineItemId: LineItemID?,
        periodEnd: Int64?,
        paidDays: Int64,
        createdAt: Int64,
        updatedAt: Int64,
        live: Bool = true
    ) {
        self.purchaseId = purchaseId
        self.provider = provider
        self.checkoutId = checkoutId
        self.externalPurchaseId = externalPurchaseId
        self.bundleId = bundleId
        self.productId = productId
        self.kind = kind
        self.status = status
        self.currency = currency
        self.amountTotal = amountTotal
        self.amountTax = amountTax
        self.taxCountry = taxCountry
        self.subscriptionId = subscriptionId
        self.buyLineItemId = buyLineItemId
        self.periodEnd = periodEnd
        self.paidDays = paidDays
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.live = live
    }
}
