import ExternalPurchase
import Foundation
import Payments
import Storage

/// Renewals and refunds: facts that refer to a purchase recorded before.
extension PaymentChangeMapper {
    func renewal(_ invoice: InvoicePayment, event: (provider: String, eventId: String), at now: Int64) throws
        -> Decision
    {
        guard let subscription = invoice.subscriptionId,
            var purchase = try ledger.purchase(subscriptionId: subscription)
        else { return .wait("the renewal's subscription has no purchase yet") }
        var change = PaymentChange(event: event, outcome: "renewal recorded", at: now)
        purchase.periodEnd = max(purchase.periodEnd ?? 0, invoice.period.end)
        purchase.updatedAt = now
        change.purchase = purchase
        change.webhooks = try entitlements.event(
            .subscriptionRenewed,
            purchase: purchase,
            cause: invoice.invoiceId,
            at: now
        )
        guard let token = purchase.externalPurchaseId, let buy = purchase.buyLineItemId else {
            change.outcome = "renewal recorded; nothing to report to Apple"
            return .apply(change)
        }
        // The purchase's items on whichever token each went (a renewal may be on another token of the customer, or
        // held): the latest one carries the paid days on.
        let chain = try ledger.purchaseLineItems(containing: buy)
        let items = chain.compactMap { stored -> SubscriptionBuyLineItem? in
            guard
                case .subscriptionBuy(let item) = try? JSONDecoder().decode(LineItem.self, from: Data(stored.body.utf8))
            else { return nil }
            return item.lineItemId == buy || item.referenceLineItemId == buy ? item : nil
        }
        guard let previous = items.max(by: { $0.subscriptionStartDate < $1.subscriptionStartDate }) else {
            return .wait("the subscription's start is not recorded yet")
        }
        do {
            let item = try lineItems.renewal(invoice, previous: previous, exchangeRate: rate(invoice.currency))
            let body = try Self.encode(.subscriptionBuy(item))
            change.charges = (["invoice:" + invoice.invoiceId] + (invoice.paymentIntentId.map { [$0] } ?? [])).map {
                key in
                PurchaseCharge(
                    chargeKey: key,
                    purchaseId: purchase.purchaseId,
                    lineItemId: item.lineItemId,
                    amountTotal: invoice.total,
                    amountTax: invoice.tax,
                    amountRefunded: 0,
                    createdAt: invoice.paidAt
                )
            }
            purchase.periodEnd = max(purchase.periodEnd ?? 0, item.subscriptionEndDate)
            purchase.paidDays = Int64(item.subscriptionDaysOfPaidService)
            purchase.updatedAt = now
            change.purchase = purchase
            change.outcome = "renewal recorded; line item \(item.lineItemId) queued for Apple"
            try place(item, body: body, purchaseToken: token, chain: chain, in: &change)
        } catch let error as AppleLineItemError {
            change.outcome = "renewal recorded; not reportable: \(error)"
        }
        return .apply(change)
    }

    /// Puts a renewal on a token of the customer active at its date (`LineItemPlacement`): the purchase's token
    /// while it is active, else another; none known → held, and the outcome says so (it is logged as a warning
    /// and shown on the dashboard until the app forwards such a token).
    private func place(
        _ item: SubscriptionBuyLineItem,
        body: String,
        purchaseToken token: String,
        chain: [StoredLineItem],
        in change: inout PaymentChange
    ) throws {
        guard let purchaseToken = try ledger.token(token) else {
            change.lineItems = [(token, item.lineItemId, body)]
            return
        }
        let placement = LineItemPlacement(ledger: ledger)
        if let target = try placement.token(at: item.creationDate, purchaseToken: purchaseToken, chain: chain) {
            change.lineItems = [(target.externalPurchaseId, item.lineItemId, body)]
            if target.externalPurchaseId != token {
                change.outcome += " on token \(target.externalPurchaseId), active at its date (the purchase's expired)"
            }
        } else {
            change.heldLineItems = [(token, item.lineItemId, body)]
            change.outcome =
                "renewal recorded; line item \(item.lineItemId) held: no token of the customer is active at its date"
        }
    }

    func refund(_ refund: ChargeRefund, event: (provider: String, eventId: String), at now: Int64) throws -> Decision {
        let key = refund.paymentIntentId ?? refund.chargeId
        guard let charge = try ledger.charge(key: key), var purchase = try ledger.purchase(id: charge.purchaseId)
        else { return .wait("the refunded payment has no purchase yet") }
        // Refunded amounts are cumulative: a late delivery of an earlier refund changes nothing.
        guard refund.amountRefunded > charge.amountRefunded else {
            return .apply(PaymentChange(event: event, outcome: "refund already recorded", at: now))
        }
        var change = PaymentChange(
            event: event,
            outcome: "refund recorded",
            refund: (charge.chargeKey, refund.amountRefunded),
            at: now
        )
        // A refund of one renewal leaves the subscription as it was; only a full refund of the buy refunds it.
        if charge.lineItemId == purchase.buyLineItemId || purchase.kind == Product.Kind.oneTime.rawValue {
            purchase.status = refund.fullyRefunded ? .refunded : .partiallyRefunded
        }
        purchase.updatedAt = now
        change.purchase = purchase
        change.webhooks = try entitlements.event(
            .purchaseRefunded,
            purchase: purchase,
            cause: "\(charge.chargeKey):\(refund.amountRefunded)",
            at: now
        )
        guard purchase.externalPurchaseId != nil, purchase.buyLineItemId != nil else {
            change.outcome = "refund recorded; nothing to report to Apple"
            return .apply(change)
        }
        // The refunded item may be a renewal on another token of the customer: the refund goes on the token of
        // the item it refers to (Apple looks the reference up on the report's token).
        let chain = try ledger.purchaseLineItems(containing: charge.lineItemId)
        guard
            let stored = chain.first(where: { $0.lineItemId == charge.lineItemId }),
            let buy = try? JSONDecoder().decode(LineItem.self, from: Data(stored.body.utf8))
        else { return .wait("the refunded buy's line item is not recorded yet") }
        guard stored.heldSince == nil else {
            return .wait("the refunded renewal is held until a token of the customer can carry it")
        }
        do {
            if let item = try lineItems.refund(refund, of: buy, alreadyRefunded: charge.amountRefunded) {
                change.lineItems = [(stored.externalPurchaseId, item.lineItemId, try Self.encode(.refund(item)))]
                change.outcome = "refund recorded; line item \(item.lineItemId) queued for Apple"
            } else {
                change.outcome = "refund already reported"
            }
        } catch let error as AppleLineItemError {
            change.outcome = "refund recorded; not reportable: \(error)"
        }
        return .apply(change)
    }
}
