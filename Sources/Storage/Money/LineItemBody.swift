import Domain
import Foundation

/// The fields of Apple's line item JSON (as stored in `line_items.body`) that the money rows keep. The body was
/// checked against Apple's rules before it was stored; a body that still does not read (a database edited by
/// hand) leaves the item out of the money view rather than stopping the write that stores it.
struct LineItemBody: Decodable {
    var creationDate: Int64
    var eventType: String
    var productType: String?
    var productIdentifier: String?
    var subscriptionEvent: String?
    var subscriptionDaysOfPaidService: Int64?
    var quantity: Int64?
    var referenceLineItemId: LineItemID?
    var amountTaxInclusive: Int64
    var amountTaxExclusive: Int64
    var taxAmount: Int64
    var netAmountTaxExclusive: Int64
    var reportingCurrency: CurrencyCode
    var pricingCurrency: CurrencyCode
    var taxCountry: TaxCountry
    /// Read as `Decimal` (base 10, digit by digit) and kept as its plain text: no binary floating point.
    var exchangeRate: Decimal?
    var erroneouslySubmitted: Bool?

    static func decode(_ body: String) -> LineItemBody? {
        try? JSONDecoder().decode(LineItemBody.self, from: Data(body.utf8))
    }

    var isRefund: Bool { eventType == "REFUND" }

    /// The rate as plain decimal text (`0.000079`), as Apple received it.
    var exchangeRateText: String? {
        exchangeRate.map { NSDecimalNumber(decimal: $0).description(withLocale: Locale(identifier: "en_US_POSIX")) }
    }
}
