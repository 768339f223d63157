public import Domain

/// Why a payment fact cannot become an Apple line item. Each case is something the caller has to supply or
/// decide, never a rounding problem.
public enum AppleLineItemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The purchase carries no product id (Apple's `productIdentifier` is required on buys).
    case missingProduct
    /// A subscription start needs its billing period (from the first invoice, or computed from the interval).
    case missingPeriod
    /// The pricing currency is not one Apple accepts for reporting, and no EUR/USD `ExchangeRate` was given.
    case exchangeRateRequired(currency: CurrencyCode)
    /// The rate is not positive decimal text, or its reporting currency is not EUR or USD.
    case invalidExchangeRate(String)
    /// Neither the billing country nor the fallback is an ISO 3166-1 alpha-3 code.
    case unknownTaxCountry(String)
    /// A refund in another currency than the buy it refunds.
    case currencyMismatch(buy: String, refund: String)
    /// The referenced line item is a refund, not a buy.
    case notABuy(String)
    /// An amount is negative or the tax exceeds the total.
    case inconsistentAmounts(String)
    /// Apple's line item type could not be built from the values (should not happen).
    case unrepresentable(String)

    public var description: String {
        switch self {
        case .missingProduct: "the purchase has no product id"
        case .missingPeriod: "a subscription start needs its billing period"
        case .exchangeRateRequired(let currency):
            "\(currency) is not an Apple reporting currency: an exchange rate to EUR or USD is required"
        case .invalidExchangeRate(let rate): "invalid exchange rate \(rate)"
        case .unknownTaxCountry(let country): "\(country) is not an ISO 3166-1 country"
        case .currencyMismatch(let buy, let refund): "a refund in \(refund) of a buy in \(buy)"
        case .notABuy(let id): "line item \(id) is not a buy"
        case .inconsistentAmounts(let detail): "inconsistent amounts: \(detail)"
        case .unrepresentable(let detail): "cannot build the line item: \(detail)"
        }
    }
}
