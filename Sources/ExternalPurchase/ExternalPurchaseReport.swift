public import Domain

/// The body of Apple's Send External Purchase Report call (`ExternalPurchaseReport`), with Apple's JSON names.
public struct ExternalPurchaseReport: Sendable, Equatable, Codable {
    /// A UUID; new for each new report, the same for each retry of one report.
    public var requestIdentifier: RequestIdentifier
    public var externalPurchaseId: ExternalPurchaseID
    public var status: ReportStatus
    /// Only with `LINE_ITEM`.
    public var lineItems: [LineItem]?

    public init(
        requestIdentifier: RequestIdentifier,
        externalPurchaseId: ExternalPurchaseID,
        status: ReportStatus,
        lineItems: [LineItem]? = nil
    ) {
        self.requestIdentifier = requestIdentifier
        self.externalPurchaseId = externalPurchaseId
        self.status = status
        self.lineItems = lineItems
    }
}

/// One line item: a one-time buy, a subscription buy (start, renewal, change, payment) or a refund. Encoded as
/// Apple's flat objects, told apart by `eventType` and `productType`.
public enum LineItem: Sendable, Equatable, Codable {
    case oneTimeBuy(OneTimeBuyLineItem)
    case subscriptionBuy(SubscriptionBuyLineItem)
    case refund(RefundLineItem)

    public var isRefund: Bool {
        if case .refund = self { return true }
        return false
    }

    private enum Keys: String, CodingKey {
        case eventType, productType
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let eventType = try container.decode(String.self, forKey: .eventType)
        switch eventType {
        case "REFUND":
            self = .refund(try RefundLineItem(from: decoder))
        case "BUY":
            let productType = try container.decode(String.self, forKey: .productType)
            switch productType {
            case "ONE_TIME_BUY": self = .oneTimeBuy(try OneTimeBuyLineItem(from: decoder))
            case "SUBSCRIPTION": self = .subscriptionBuy(try SubscriptionBuyLineItem(from: decoder))
            default:
                throw DecodingError.dataCorruptedError(
                    forKey: .productType,
                    in: container,
                    debugDescription: "productType must be ONE_TIME_BUY or SUBSCRIPTION"
                )
            }
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .eventType,
                in: container,
                debugDescription: "eventType must be BUY or REFUND"
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .oneTimeBuy(let item): try item.encode(to: encoder)
        case .subscriptionBuy(let item): try item.encode(to: encoder)
        case .refund(let item): try item.encode(to: encoder)
        }
    }

    /// The fields every kind shares.
    public var common: LineItemAmounts {
        switch self {
        case .oneTimeBuy(let item): item.amounts
        case .subscriptionBuy(let item): item.amounts
        case .refund(let item): item.amounts
        }
    }

    public var isBuy: Bool {
        if case .refund = self { return false }
        return true
    }
}

/// The fields all line items carry. Amounts are in milli-units of `reportingCurrency` (€2.99 is 2990).
public struct LineItemAmounts: Sendable, Equatable {
    public var lineItemId: LineItemID
    /// UNIX ms the customer authorized the purchase (for refunds: the date of the refund).
    public var creationDate: Int64
    public var amountTaxInclusive: Int64
    public var amountTaxExclusive: Int64
    public var taxAmount: Int64
    public var netAmountTaxExclusive: Int64
    public var reportingCurrency: CurrencyCode
    public var pricingCurrency: CurrencyCode
    /// ISO 3166-1 alpha-3.
    public var taxCountry: TaxCountry
    public var exchangeRate: DecimalNumber?
    public var restatement: Bool?
    public var erroneouslySubmitted: Bool?
}

/// What every line item kind has, so the shared fields are read one way.
protocol LineItemFields {
    var lineItemId: LineItemID { get }
    var creationDate: Int64 { get }
    var amountTaxInclusive: Int64 { get }
    var amountTaxExclusive: Int64 { get }
    var taxAmount: Int64 { get }
    var netAmountTaxExclusive: Int64 { get }
    var reportingCurrency: CurrencyCode { get }
    var pricingCurrency: CurrencyCode { get }
    var taxCountry: TaxCountry { get }
    var exchangeRate: DecimalNumber? { get }
    var restatement: Bool? { get }
    var erroneouslySubmitted: Bool? { get }
}

extension LineItemFields {
    var amounts: LineItemAmounts {
        LineItemAmounts(
            lineItemId: lineItemId,
            creationDate: creationDate,
            amountTaxInclusive: amountTaxInclusive,
            amountTaxExclusive: amountTaxExclusive,
            taxAmount: taxAmount,
            netAmountTaxExclusive: netAmountTaxExclusive,
            reportingCurrency: reportingCurrency,
            pricingCurrency: pricingCurrency,
            taxCountry: taxCountry,
            exchangeRate: exchangeRate,
            restatement: restatement,
            erroneouslySubmitted: erroneouslySubmitted
        )
    }
}

/// `OneTimeBuyLineItem`.
public struct OneTimeBuyLineItem: Sendable, Equatable, Codable, LineItemFields {
    public var lineItemId: LineItemID
    public var creationDate: Int64
    public var eventType = "BUY"
    public var productType = "ONE_TIME_BUY"
    public var productIdentifier: String
    public var amountTaxInclusive: Int64
    public var amountTaxExclusive: Int64
    public var taxAmount: Int64
    public var netAmountTaxExclusive: Int64
    public var reportingCurrency: CurrencyCode
    public var pricingCurrency: CurrencyCode
    public var taxCountry: TaxCountry
    public var quantity: Int64
    public var exchangeRate: DecimalNumber?
    public var restatement: Bool?
    public var erroneouslySubmitted: Bool?

}

/// `SubscriptionBuyLineItem`.
public struct SubscriptionBuyLineItem: Sendable, Equatable, Codable, LineItemFields {
    public var lineItemId: LineItemID
    public var creationDate: Int64
    public var eventType = "BUY"
    public var productType = "SUBSCRIPTION"
    public var productIdentifier: String
    public var amountTaxInclusive: Int64
    public var amountTaxExclusive: Int64
    public var taxAmount: Int64
    public var netAmountTaxExclusive: Int64
    public var reportingCurrency: CurrencyCode
    public var pricingCurrency: CurrencyCode
    public var taxCountry: TaxCountry
    public var quantity: Int64
    /// `SUBSCRIPTION_START`, `RENEWAL`, `SUBSCRIPTION_CHANGE` or `SUBSCRIPTION_PAYMENT`.
    public var subscriptionEvent: String
    public var subscriptionStartDate: Int64
    public var subscriptionEndDate: Int64
    /// Paid days so far: 0 at the start, accumulating over renewals.
    public var subscriptionDaysOfPaidService: Int32
    /// For renewals: the `lineItemId` of the subscription start.
    public var referenceLineItemId: LineItemID?
    public var exchangeRate: DecimalNumber?
    public var restatement: Bool?
    public var erroneouslySubmitted: Bool?

}

/// `RefundLineItem`: a refund or chargeback of a buy, up to its full amount.
public struct RefundLineItem: Sendable, Equatable, Codable, LineItemFields {
    public var lineItemId: LineItemID
    public var creationDate: Int64
    public var eventType = "REFUND"
    public var amountTaxInclusive: Int64
    public var amountTaxExclusive: Int64
    public var taxAmount: Int64
    public var netAmountTaxExclusive: Int64
    public var reportingCurrency: CurrencyCode
    public var pricingCurrency: CurrencyCode
    public var taxCountry: TaxCountry
    /// The `lineItemId` of the refunded buy.
    public var referenceLineItemId: LineItemID
    /// Not allowed on refunds (Apple: "Don't include a quantity for refunds"); kept only to reject it.
    public var quantity: Int64?
    public var exchangeRate: DecimalNumber?
    public var restatement: Bool?
    public var erroneouslySubmitted: Bool?

}
