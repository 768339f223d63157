public import Domain
import Foundation

/// Apple's documented rules for reports and line items, checked locally so a bad report is caught where it is
/// made, not days later in an Apple error. Each problem is named after the error Apple would return.
public struct ReportValidator: Sendable {
    /// Apple's allowed `reportingCurrency` values. A pricing currency in this list must also be the reporting
    /// currency (no exchange rate); any other pricing currency reports in EUR or USD with an exchange rate.
    public static let reportingCurrencies: Set<CurrencyCode> = [
        "CLP", "EUR", "QAR", "COP", "VND", "EGP", "THB", "HKD", "NOK", "BRL", "GBP", "AUD", "SEK", "INR", "BGN", "ZAR",
        "KZT", "NGN", "TWD", "MXN", "CHF", "PEN", "DKK", "AED", "ILS", "KRW", "PHP", "TZS", "PKR", "HUF", "IDR", "CNY",
        "MYR", "RUB", "RON", "SGD", "TRY", "CZK", "SAR", "USD", "NZD", "PLN", "JPY", "CAD",
    ]

    static let subscriptionEvents: Set<String> = [
        "SUBSCRIPTION_START", "RENEWAL", "SUBSCRIPTION_CHANGE", "SUBSCRIPTION_PAYMENT",
    ]

    /// The token the report is for.
    public var token: ExternalPurchaseToken?
    /// Line items already accepted or queued for this token (for refunds and their net amounts).
    public var earlierLineItems: [LineItem]
    /// Milliseconds since 1970.
    public var now: Int64

    public init(token: ExternalPurchaseToken?, earlierLineItems: [LineItem] = [], now: Int64) {
        self.token = token
        self.earlierLineItems = earlierLineItems
        self.now = now
    }

    public func problems(in report: ExternalPurchaseReport) -> [ReportProblem] {
        var problems: [ReportProblem] = []
        if UUID(uuidString: report.requestIdentifier.rawValue) == nil {
            problems.append(.init("UnknownEnumError", field: "requestIdentifier", "requestIdentifier must be a UUID"))
        }
        let items = report.lineItems ?? []
        switch report.status {
        case .lineItem:
            if items.isEmpty {
                problems.append(
                    .init("MissingLineItemsForStatusError", field: "lineItems", "LINE_ITEM needs line items")
                )
            }
        case .noLineItem, .unrecognizedToken, .duplicateToken:
            if report.lineItems != nil {
                problems.append(
                    .init(
                        "LineItemsNotAllowedForStatusError",
                        field: "lineItems",
                        "only LINE_ITEM reports carry line items"
                    )
                )
            }
        }
        if report.status == .duplicateToken, !(token.map(ReportingPolicy.mayBeDuplicate) ?? false) {
            problems.append(
                .init(
                    "DuplicateTokenStatusNotAllowedError",
                    field: "status",
                    "DUPLICATE_TOKEN is only for ACQUISITION and SERVICES custom-link tokens"
                )
            )
        }
        return problems + self.problems(in: items)
    }

    /// The problems of a set of new line items for the token (also used when the developer posts them).
    public func problems(in items: [LineItem]) -> [ReportProblem] {
        var problems: [ReportProblem] = []
        var seen: Set<LineItemID> = []
        for (index, item) in items.enumerated() {
            // What Apple holds when it reads this item: the earlier items, and those before it in the report.
            let before = earlierLineItems + items[..<index]
            let id = item.common.lineItemId
            if !seen.insert(id).inserted {
                problems.append(
                    .init("DuplicateValueError", field: "lineItemId", lineItem: id, "a line item appears twice")
                )
            }
            problems += commonProblems(item.common)
            problems += correctionProblems(item.common, batch: items)
            switch item {
            case .oneTimeBuy(let buy):
                problems += buyProblems(
                    id: id,
                    productIdentifier: buy.productIdentifier,
                    quantity: buy.quantity,
                    item.common
                )
            case .subscriptionBuy(let buy):
                problems += buyProblems(
                    id: id,
                    productIdentifier: buy.productIdentifier,
                    quantity: buy.quantity,
                    item.common
                )
                problems += subscriptionProblems(buy)
                problems += subscriptionReferenceProblems(buy, batch: items)
            case .refund(let refund):
                problems += refundProblems(refund, batch: items, before: Array(before))
            }
            problems += restatedBuyProblems(item, before: Array(before))
            problems += correctionNetProblems(item, before: Array(before))
        }
        return problems
    }

    /// linkout's ceiling on one line item's amounts: a billion units of the reporting currency, far above any
    /// sale, and low enough that millions of such items still sum inside 64 bits (the money roll-ups, the close).
    public static let maximumMilliUnits: Int64 = 1_000_000_000_000

    /// What Apple checks on every line item, whatever its kind.
    private func commonProblems(_ item: LineItemAmounts) -> [ReportProblem] {
        identifierProblems(item) + amountProblems(item) + currencyProblems(item) + flagProblems(item)
            + dateProblems(item)
    }

    private func identifierProblems(_ item: LineItemAmounts) -> [ReportProblem] {
        let id = item.lineItemId
        var problems: [ReportProblem] = []
        if id.isEmpty { problems.append(.init("OmittedFieldError", field: "lineItemId", "lineItemId is empty")) }
        if id.rawValue.utf8.count > 128 {
            problems.append(
                .init("MaximumLengthExceededError", field: "lineItemId", lineItem: id, "at most 128 bytes of UTF-8")
            )
        }
        return problems
    }

    private func amountProblems(_ item: LineItemAmounts) -> [ReportProblem] {
        let id = item.lineItemId
        var problems: [ReportProblem] = []
        for (field, value) in [
            ("amountTaxInclusive", item.amountTaxInclusive), ("amountTaxExclusive", item.amountTaxExclusive),
            ("taxAmount", item.taxAmount), ("netAmountTaxExclusive", item.netAmountTaxExclusive),
        ] {
            if value < 0 {
                problems.append(
                    .init("NegativeValueNotAllowedError", field: field, lineItem: id, "amounts are never negative")
                )
            } else if value > Self.maximumMilliUnits {
                problems.append(
                    .init(
                        "MaximumValueExceededError",
                        field: field,
                        lineItem: id,
                        "at most \(Self.maximumMilliUnits) milli-units (a billion in the reporting currency)"
                    )
                )
            }
        }
        if item.amountTaxInclusive != Int64.saturating(item.amountTaxExclusive, plus: item.taxAmount) {
            problems.append(
                .init(
                    "IncorrectAmountTaxInclusiveError",
                    field: "amountTaxInclusive",
                    lineItem: id,
                    "amountTaxInclusive must equal amountTaxExclusive + taxAmount (milli-units)"
                )
            )
        }
        return problems
    }

    /// The country and the two currencies: Apple takes some pricing currencies as they are and wants the others
    /// exchanged into EUR or USD with the rate stated.
    private func currencyProblems(_ item: LineItemAmounts) -> [ReportProblem] {
        let id = item.lineItemId
        var problems: [ReportProblem] = []
        // Apple: "ISO 3166-1 alpha-3" ("taxCountry"); three capitals that name no country are Apple's UnknownEnumError.
        if !CountryCodes.isAlpha3(item.taxCountry.rawValue) {
            problems.append(
                .init(
                    "UnknownEnumError",
                    field: "taxCountry",
                    lineItem: id,
                    "taxCountry is an ISO 3166-1 alpha-3 code like ESP"
                )
            )
        }
        if !Self.isUppercaseCode(item.pricingCurrency.rawValue) {
            problems.append(
                .init("UnknownEnumError", field: "pricingCurrency", lineItem: id, "an ISO 4217 code like EUR")
            )
        }
        if !Self.reportingCurrencies.contains(item.reportingCurrency) {
            problems.append(
                .init(
                    "UnknownEnumError",
                    field: "reportingCurrency",
                    lineItem: id,
                    "not one of Apple's reporting currencies"
                )
            )
        } else if Self.reportingCurrencies.contains(item.pricingCurrency) {
            if item.reportingCurrency != item.pricingCurrency {
                problems.append(
                    .init(
                        "ReportingCurrencyExchangeNotAllowedError",
                        field: "reportingCurrency",
                        lineItem: id,
                        "a pricing currency Apple accepts must also be the reporting currency"
                    )
                )
            }
            if item.exchangeRate != nil {
                problems.append(
                    .init(
                        "FieldNotAllowedError",
                        field: "exchangeRate",
                        lineItem: id,
                        "no exchangeRate when the currencies are equal"
                    )
                )
            }
        } else {
            if item.reportingCurrency != "EUR" && item.reportingCurrency != "USD" {
                problems.append(
                    .init(
                        "ReportingCurrencyExchangeNotAllowedError",
                        field: "reportingCurrency",
                        lineItem: id,
                        "prices in \(item.pricingCurrency) are reported in EUR or USD"
                    )
                )
            }
            if item.exchangeRate?.isPositive != true {
                problems.append(
                    .init(
                        "OmittedFieldError",
                        field: "exchangeRate",
                        lineItem: id,
                        "an exchangeRate above 0 is required"
                    )
                )
            }
        }
        return problems
    }

    private func flagProblems(_ item: LineItemAmounts) -> [ReportProblem] {
        var problems: [ReportProblem] = []
        if item.erroneouslySubmitted == true && item.restatement != true {
            problems.append(
                .init(
                    "ErroneouslySubmittedNotRestatementError",
                    field: "erroneouslySubmitted",
                    lineItem: item.lineItemId,
                    "erroneouslySubmitted requires restatement"
                )
            )
        }
        return problems
    }

    /// Apple's window for a line item's date: not in the future, within three years, inside the token's active
    /// period.
    private func dateProblems(_ item: LineItemAmounts) -> [ReportProblem] {
        let id = item.lineItemId
        var problems: [ReportProblem] = []
        if item.creationDate > now + 5 * Milliseconds.minute {
            problems.append(
                .init("FutureDateError", field: "creationDate", lineItem: id, "creationDate is in the future")
            )
        } else if item.creationDate < now - Self.year * 3 {
            problems.append(
                .init(
                    "DateTooFarInPastError",
                    field: "creationDate",
                    lineItem: id,
                    "line items are reported within three years"
                )
            )
        }
        if let token, !ReportingPolicy.isActive(token, at: item.creationDate) {
            problems.append(
                .init(
                    "LineItemCreationDateOutOfRangeError",
                    field: "creationDate",
                    lineItem: id,
                    "creationDate must lie within the token's active period"
                )
            )
        }
        return problems
    }

    private func buyProblems(id: LineItemID, productIdentifier: String, quantity: Int64, _ item: LineItemAmounts)
        -> [ReportProblem]
    {
        var problems: [ReportProblem] = []
        if productIdentifier.isEmpty {
            problems.append(
                .init("OmittedFieldError", field: "productIdentifier", lineItem: id, "productIdentifier is empty")
            )
        } else if productIdentifier.utf8.count > 256 {
            // Apple says 256 without a unit: counted in UTF-8 bytes, the strictest reading.
            problems.append(
                .init(
                    "MaximumLengthExceededError",
                    field: "productIdentifier",
                    lineItem: id,
                    "at most 256 bytes of UTF-8"
                )
            )
        }
        // A control character (a NUL ends a C string) went to Apple whole and was cut short in every view of the
        // ledger, which then no longer matched what Apple holds.
        if productIdentifier.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            problems.append(
                .init(
                    "InvalidCharacterError",
                    field: "productIdentifier",
                    lineItem: id,
                    "productIdentifier holds a control character"
                )
            )
        }
        if quantity < 1 {
            problems.append(
                .init("PositiveValueRequiredError", field: "quantity", lineItem: id, "quantity must be at least 1")
            )
        }
        // A first report of a buy has nothing refunded yet: its net equals its tax-exclusive amount.
        if item.restatement != true && item.netAmountTaxExclusive != item.amountTaxExclusive {
            problems.append(
                .init(
                    "IncorrectNetAmountError",
                    field: "netAmountTaxExclusive",
                    lineItem: id,
                    "a new buy's netAmountTaxExclusive equals its amountTaxExclusive"
                )
            )
        }
        return problems
    }

    static func isUppercaseCode(_ text: String) -> Bool {
        CurrencyCode(text).isWellFormed
    }
}
