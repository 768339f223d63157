public import Domain

/// One line item as Apple sees it now, in structured form (`money_line_items`): the latest version of its
/// `lineItemId` that was not set aside by Apple's rejection ("Apple uses only the most recent version", Apple's
/// "Reporting corrections"), with its amounts in milli-units, the report that carries it, Apple's acceptance, and its
/// commission classification. A retracted item (`erroneouslySubmitted`) keeps its row and figures, flagged, and counts
/// as zero in every total.
public struct MoneyLineItem: Sendable, Equatable, Codable {
    public var environment: Environment
    /// The app (`bundleId`) of the token carrying the item; line item ids are unique per app.
    public var bundleId: BundleID
    public var lineItemId: LineItemID
    /// `line_items.id` of the version that counts.
    public var lineItemRow: Int64
    public var externalPurchaseId: ExternalPurchaseID
    public var creationDate: Int64
    /// `BUY` or `REFUND`.
    public var eventType: String
    /// A refund's product and product type are its buy's.
    public var productId: ProductID
    public var productType: String
    public var subscriptionEvent: String?
    public var quantity: Int64?
    public var referenceLineItemId: LineItemID?
    /// Milli-units of `reportingCurrency`, as reported to Apple.
    public var amountTaxInclusive: Int64
    public var amountTaxExclusive: Int64
    public var taxAmount: Int64
    public var netAmountTaxExclusive: Int64
    public var reportingCurrency: CurrencyCode
    public var pricingCurrency: CurrencyCode
    /// The tax-inclusive amount in milli-units of `pricingCurrency`; `pricingAmountSource` says how it was found.
    public var pricingAmount: Int64
    public var pricingAmountSource: PricingAmountSource
    /// Apple's `exchangeRate` as decimal text, exactly as reported; nil when the currencies are the same.
    public var exchangeRate: String?
    public var taxCountry: TaxCountry
    /// The payment provider the purchase went through (`stripe`, `paddle`, `demo`), or `backend` for items your
    /// backend posted.
    public var provider: ProviderID
    public var retracted: Bool
    /// Held: no token of the customer was active at its date yet, so it is on no report.
    public var held: Bool
    public var reportRequestIdentifier: RequestIdentifier?
    public var reportState: ReportState?
    /// When Apple accepted the report carrying this version; nil until then.
    public var acceptedAt: Int64?
    public var classification: CommissionClassification

    public var isRefund: Bool { eventType == "REFUND" }

    /// How a line item's pricing-currency amount was found. Never floating point: milli-units throughout.
    public enum PricingAmountSource: String, Sendable, Equatable, Codable {
        /// Pricing and reporting currency are the same: the reported amount.
        case reported
        /// The provider's charge in minor units, scaled by the currency's exponent (`CurrencyExponent`): exact.
        case charge
        /// Derived from the reported amount and Apple's `exchangeRate` (pricing = reporting ÷ rate, rounded half
        /// up in integers): within half a milli-unit of reporting currency of the true figure.
        case exchangeRate = "exchange_rate"
        /// A refund in another currency than its buy's report: its buy's pricing amount in proportion to the
        /// reported amounts (`buy.pricing × refund.amount ÷ buy.amount`, rounded half away from zero in
        /// integers), so a full refund takes back exactly what the buy counted.
        case buy
        /// None of the above could be found (a rate too large or small to convert into 64-bit milli-units):
        /// counted as 0, never as the reporting-currency figure.
        case unknown
    }
}
