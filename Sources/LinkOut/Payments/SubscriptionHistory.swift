import Domain
import ExternalPurchase
import Foundation
import Storage

/// A subscription's items in the order of their periods (the start and every item referring to it, on whichever
/// token each went): which item a new one follows, and the days of paid service of those after it. Stripe delivers
/// invoices in no set order, so a renewal can arrive after the next one; it follows the period before it, and the
/// items after it count its days too (Apple: "subscriptionDaysOfPaidService", the paid days so far).
struct SubscriptionHistory {
    /// Each line item's latest version, by the start of its period.
    let items: [SubscriptionBuyLineItem]
    /// An item's price by its line item id (a renewal's invoice total), when known; else its reported amount.
    let price: (String) throws -> Int64?

    init(chain: [StoredLineItem], startedBy buy: LineItemID, price: @escaping (String) throws -> Int64?) {
        var latest: [LineItemID: SubscriptionBuyLineItem] = [:]
        for stored in chain {
            guard
                case .subscriptionBuy(let item) = try? JSONDecoder().decode(LineItem.self, from: Data(stored.body.utf8)),
                item.lineItemId == buy || item.referenceLineItemId == buy
            else { continue }
            latest[item.lineItemId] = item
        }
        items = latest.values.sorted {
            ($0.subscriptionStartDate, $0.lineItemId.rawValue) < ($1.subscriptionStartDate, $1.lineItemId.rawValue)
        }
        self.price = price
    }

    /// The end of the period the subscription had at `instant`: that of the item started last by then, `adding`
    /// one not stored yet (not the latest end seen: a downgrade from a yearly plan ends the year early; a renewal
    /// delivered late starts earlier and changes nothing). Nil before the start is recorded.
    func periodEnd(at instant: Int64 = .max, adding item: SubscriptionBuyLineItem? = nil) -> Int64? {
        var started = items.filter { $0.lineItemId != item?.lineItemId && $0.subscriptionStartDate <= instant }
        // First, so it wins a tie (`max` keeps the first of equals): it is the latest word on that period.
        if let item, item.subscriptionStartDate <= instant { started.insert(item, at: 0) }
        return started.max { $0.subscriptionStartDate < $1.subscriptionStartDate }?.subscriptionEndDate
    }

    /// The item whose period starts last at or before `start`, other than the item `except`, and whether its
    /// period was paid service (`PaidService`); the earliest when all start later (a period the provider dates a
    /// moment before the start's). Nil before the start is recorded.
    func preceding(_ start: Int64, except: LineItemID) throws -> (item: SubscriptionBuyLineItem, paid: Bool)? {
        let others = items.filter { $0.lineItemId != except }
        var before = others.filter { $0.subscriptionStartDate <= start }
        if before.isEmpty { before = Array(others.prefix(1)) }
        guard let previous = before.last else { return nil }
        return (previous, try PaidService.latestIsPaid(before, price: price))
    }

    /// The items whose periods start after `item`'s, each with its days of paid service counted again with `item`
    /// among them (the days it follows carried on, as `AppleLineItems` counts them for a new item).
    func following(_ item: SubscriptionBuyLineItem) throws -> [SubscriptionBuyLineItem] {
        var ordered = items.filter {
            $0.lineItemId != item.lineItemId && $0.subscriptionStartDate <= item.subscriptionStartDate
        }
        // Dated before the start itself (see `preceding`): it follows the start, and nothing is counted again.
        guard !ordered.isEmpty else { return [] }
        ordered.append(item)
        let first = ordered.count
        ordered += items.filter {
            $0.lineItemId != item.lineItemId && $0.subscriptionStartDate > item.subscriptionStartDate
        }
        // Whether each item's period was paid, carried along (one price read an item).
        var paid = try PaidService.latestIsPaid(Array(ordered[..<first]), price: price)
        for index in first..<ordered.count {
            let previous = ordered[index - 1]
            let later = ordered[index]
            ordered[index].subscriptionDaysOfPaidService = AppleLineItems.paidDays(
                after: previous,
                paid: paid,
                next: (later.subscriptionStartDate, isChange: later.subscriptionEvent == "SUBSCRIPTION_CHANGE")
            )
            paid = try PaidService.isPaid(later, after: paid, price: price)
        }
        return Array(ordered[first...])
    }
}
