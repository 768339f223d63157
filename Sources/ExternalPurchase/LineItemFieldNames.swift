import Domain
import Foundation

/// The fields Apple lists for each kind of line item ("OneTimeBuyLineItem", "SubscriptionBuyLineItem",
/// "RefundLineItem"): a field of another kind posted on an item (a `referenceLineItemId` or
/// `subscriptionStartDate` on a one-time buy) is refused by name, not dropped without a word while the item is
/// accepted. A key no kind has is left alone, as before (and never repeated back: it is whatever the client sent).
/// A refund's `quantity` is decoded so the validator can say why it is refused.
public enum LineItemFieldNames {
    static let common: Set<String> = [
        "lineItemId", "creationDate", "eventType", "amountTaxInclusive", "amountTaxExclusive", "taxAmount",
        "netAmountTaxExclusive", "reportingCurrency", "pricingCurrency", "taxCountry", "exchangeRate", "restatement",
        "erroneouslySubmitted",
    ]
    static let oneTimeBuy = common.union(["productType", "productIdentifier", "quantity"])
    static let subscriptionBuy = oneTimeBuy.union([
        "subscriptionEvent", "subscriptionStartDate", "subscriptionEndDate", "subscriptionDaysOfPaidService",
        "referenceLineItemId",
    ])
    static let refund = common.union(["referenceLineItemId", "quantity"])
    static let known = subscriptionBuy.union(refund)

    /// The fields of each posted line item (JSON objects under `lineItems`) that another kind has and its own
    /// does not.
    public static func notAllowed(in body: [UInt8]) -> [ReportProblem] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let items = object["lineItems"] as? [[String: Any]]
        else { return [] }
        return items.flatMap(notAllowed)
    }

    /// The same for one line item's JSON (an operator's restatement).
    public static func notAllowed(inItem body: [UInt8]) -> [ReportProblem] {
        guard let item = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else { return [] }
        return notAllowed(item)
    }

    private static func notAllowed(_ item: [String: Any]) -> [ReportProblem] {
        let allowed: Set<String>
        switch (item["eventType"] as? String, item["productType"] as? String) {
        case ("REFUND", _): allowed = refund
        case ("BUY", "SUBSCRIPTION"): allowed = subscriptionBuy
        case ("BUY", _): allowed = oneTimeBuy
        default: return []
        }
        let kind = item["eventType"] as? String == "REFUND" ? "REFUND" : item["productType"] as? String ?? ""
        let id = (item["lineItemId"] as? String).map { LineItemID($0) }
        // A `null` is an absent field, as the decoder reads it (a backend writing every optional as null).
        let present = item.filter { !($0.value is NSNull) }.keys
        return present.filter { known.contains($0) && !allowed.contains($0) }.sorted().map { field in
            ReportProblem("FieldNotAllowedError", field: field, lineItem: id, "not a field of a \(kind) line item")
        }
    }
}
