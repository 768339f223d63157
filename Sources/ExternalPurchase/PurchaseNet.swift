public import Domain

/// Apple's `netAmountTaxExclusive` of a buy, written once: "Net after all refunds and restatements (e.g. buy
/// 1000, refund 300 → 700; restate buy to 800 → 500)". Apple "uses only the most recent version" of a
/// `lineItemId`, and a retracted version (`erroneouslySubmitted`) stands for nothing, so the net counts the
/// latest version of each item and leaves the retracted out. A refund's line item carries its buy's net after
/// it; a retraction carries the net recalculated without the item (Apple: "keeping all original fields and
/// recalculating netAmountTaxExclusive"). The validator checks every version against this, and a retraction is
/// made with it.
public enum PurchaseNet {
    /// The latest version of each line item of `items` (in the order given), without the retracted ones.
    public static func standing(_ items: [LineItem]) -> [LineItem] {
        var latest: [LineItemID: Int] = [:]
        for (index, item) in items.enumerated() { latest[item.common.lineItemId] = index }
        return items.enumerated().filter { index, item in
            latest[item.common.lineItemId] == index && item.common.erroneouslySubmitted != true
        }.map(\.element)
    }

    /// The net of the buy `buyId` after what stands of `items`: its tax-exclusive amount less its standing
    /// refunds'; 0 when the buy itself does not stand (retracted, or not among them).
    public static func ofBuy(_ buyId: LineItemID, in items: [LineItem]) -> Int64 {
        let standing = standing(items)
        guard let buy = standing.last(where: { $0.isBuy && $0.common.lineItemId == buyId }) else { return 0 }
        let refunded = standing.reduce(Int64(0)) { sum, item in
            guard case .refund(let refund) = item, refund.referenceLineItemId == buyId else { return sum }
            return Int64.saturating(sum, plus: refund.amountTaxExclusive)
        }
        return Int64.saturating(buy.common.amountTaxExclusive, minus: refunded)
    }

    /// What the standing refunds of the buy `buyId` among `items` add up to: tax included, and tax. A refund's tax
    /// is worked out against these (what Apple holds), not against the provider's own figures for the same
    /// refunds, which a refund that completed the buy, then a chargeback reversed, left apart.
    public static func refunds(ofBuy buyId: LineItemID, in items: [LineItem]) -> (inclusive: Int64, tax: Int64) {
        standing(items).reduce((inclusive: Int64(0), tax: Int64(0))) { sum, item in
            guard case .refund(let refund) = item, refund.referenceLineItemId == buyId else { return sum }
            return (
                Int64.saturating(sum.inclusive, plus: refund.amountTaxInclusive),
                Int64.saturating(sum.tax, plus: refund.taxAmount)
            )
        }
    }

    /// The buy a line item's net is about: itself, or the buy a refund refers to.
    public static func buyId(of item: LineItem) -> LineItemID {
        if case .refund(let refund) = item { return refund.referenceLineItemId }
        return item.common.lineItemId
    }
}
