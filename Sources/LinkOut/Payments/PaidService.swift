import Domain
import ExternalPurchase

/// Whether a subscription's latest period was paid service, which Apple's `subscriptionDaysOfPaidService` counts ("paid
/// days only", no free trials; it keeps counting across `SUBSCRIPTION_CHANGE`; Apple: "subscriptionDaysOfPaidService").
/// What a line item charged does not say it: a period paid from the customer's credit balance charges 0 and is paid all
/// the same. The rule, item by item in the order of their periods:
/// - the start is paid when it charged something (a free trial charges 0);
/// - a renewal is paid when its price (the invoice's total, before any credit balance) is above 0;
/// - a plan change is paid when it cost something, or when the plan before it was paid: a downgrade is bought
///   with the unused part of the paid plan (its invoice totals 0 or less), so its period is paid service too.
enum PaidService {
    /// `items`: the subscription's items, any order; `price`: an item's invoice total by its line item id, when
    /// the ledger has it.
    static func latestIsPaid(
        _ items: [SubscriptionBuyLineItem],
        price: (String) throws -> Int64?
    ) rethrows -> Bool {
        var paid = false
        for item in items.sorted(by: { $0.subscriptionStartDate < $1.subscriptionStartDate }) {
            paid = try isPaid(item, after: paid, price: price)
        }
        return paid
    }

    /// Whether `item`'s period is paid service, the period before it having been so or not (`paidBefore`): a plan
    /// change carries that on unless it charged something.
    static func isPaid(
        _ item: SubscriptionBuyLineItem,
        after paidBefore: Bool,
        price: (String) throws -> Int64?
    ) rethrows -> Bool {
        guard item.subscriptionEvent != "SUBSCRIPTION_START" else { return item.amountTaxInclusive > 0 }
        let cost = try price(item.lineItemId.rawValue) ?? item.amountTaxInclusive
        return cost > 0 || (item.subscriptionEvent == "SUBSCRIPTION_CHANGE" && paidBefore)
    }
}
