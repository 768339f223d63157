public import Domain

/// One row of the daily money roll-up (`money_daily`): a UTC day of one app, environment, provider, product, tax
/// country, pricing and reporting currency. Kept by adding each line item's change as it is written (several
/// instances may write at once), so a year of revenue reads a few thousand of these rather than every line item.
/// Amounts are tax-inclusive milli-units of the reporting currency unless named `…Pricing` (milli-units of the
/// pricing currency); refunds are positive figures, subtracted for net. Retracted items count nowhere.
public struct MoneyDay: Sendable, Equatable, Codable {
    /// Days since 1970-01-01 (UTC): `creationDate / 86,400,000`.
    public var day: Int64
    public var bundleId: BundleID
    public var environment: Environment
    public var provider: ProviderID
    public var productId: ProductID
    public var taxCountry: TaxCountry
    public var pricingCurrency: CurrencyCode
    public var reportingCurrency: CurrencyCode
    public var sales: Int64
    public var salesAmount: Int64
    public var salesTax: Int64
    public var salesPricing: Int64
    public var refunds: Int64
    public var refundsAmount: Int64
    public var refundsTax: Int64
    public var refundsPricing: Int64
    /// Estimated commission (buys less refunds), milli-units of the reporting currency: an estimate.
    public var commission: Int64
    /// Line items that carry commission (within their regime's window).
    public var commissionable: Int64

    /// Sales less refunds, tax included.
    public var netAmount: Int64 { salesAmount - refundsAmount }
    public var netTax: Int64 { salesTax - refundsTax }
    public var netPricing: Int64 { salesPricing - refundsPricing }
}
