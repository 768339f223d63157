import Domain
import ExternalPurchase
import Foundation
import Payments
import Storage

/// Renewals and plan changes: a subscription's later payments, each following its latest line item.
extension PaymentChangeMapper {
    /// A renewal (`subscription_cycle`), or with `planChange` a plan change or proration (`subscription_update`,
    /// Apple's `SUBSCRIPTION_CHANGE`): both follow the subscription's latest item and reference its start.
    func renewal(
        _ named: InvoicePayment,
        event: (provider: ProviderID, eventId: String),
        at now: Int64,
        planChange: Bool = false
    ) throws -> Decision {
        let what = planChange ? "plan change" : "renewal"
        guard let subscription = named.subscriptionId,
            var purchase = try ledger.payments.purchase(subscriptionId: subscription)
        else {
            return .wait(
                "the \(what)'s subscription \(PaymentStore.noPurchaseYet(named.subscriptionId ?? "(none named)"))"
            )
        }
        // A period that ends before it starts (a malformed event) is no part of the subscription: counted, it took
        // days of paid service from every item after it, restated so at Apple, while its own item was set aside.
        guard named.periodRunsToCurrentEnd || named.period.end >= named.period.start else {
            let refusal =
                "\(what) not recorded: its period ends before it starts (\(named.period.start) to \(named.period.end))"
            return .apply(PaymentChange(event: event, outcome: .notReportable(refusal), at: now))
        }
        var invoice = named
        if invoice.periodRunsToCurrentEnd {
            // A change billed without a period of its own runs to the end of the period being paid. When every
            // period recorded ended by then, the renewal of the period it was made in has not come yet (the
            // provider delivers in no set order): it waits for it, where it was made a change of no days and set
            // aside (`StartDateAfterEndDateError`), its money never reported.
            let end = try currentPeriodEnd(of: purchase, at: invoice.paidAt)
            guard end > invoice.paidAt else {
                return .wait(
                    "the \(what) was made in a period not recorded yet, waiting for its renewal: subscription "
                        + PaymentStore.noPeriodYet(purchase.subscriptionId ?? "(none)")
                )
            }
            invoice.period = SubscriptionPeriod(start: invoice.paidAt, end: end)
        }
        let asRead = purchase
        var change = try recorded(invoice, on: &purchase, what: what, planChange: planChange, event: event, at: now)
        change.purchaseAsRead = asRead
        guard let token = purchase.externalPurchaseId, let buy = purchase.buyLineItemId else {
            // Kept all the same: a refund of this payment finds it (and leaves the subscription as it is).
            change.charges = Self.charges(
                of: invoice,
                purchaseId: purchase.purchaseId,
                lineItemId: LineItemID(invoice.invoiceId)
            )
            change.outcome = "\(what) recorded; nothing to report to Apple"
            return .apply(change)
        }
        if let reason = try heldBehind(token) {
            return .holdBehind(token: token, reason: reason)
        }
        let charges = Self.charges(
            of: invoice,
            purchaseId: purchase.purchaseId,
            lineItemId: LineItemID(invoice.invoiceId)
        )
        var exchangeRate: ExchangeRate?
        switch rate(invoice.currency, at: invoice.paidAt) {
        case .missing(let reason):
            // The item's id is its invoice (`AppleLineItems`): a refund of it can be recorded, and waits behind it.
            change.charges = charges
            change.hold = (token, reason)
            change.outcome = "\(what) recorded; line item \(invoice.invoiceId) held: \(reason)"
            return .apply(change)
        case .rate(let found): exchangeRate = found
        case nil: break
        }
        let chain = try ledger.reports.purchaseLineItems(containing: buy)
        let history = SubscriptionHistory(chain: chain, startedBy: buy) { lineItemId in
            // A renewal's price is its invoice's total, recorded with its charge (this one's is not stored yet).
            lineItemId == invoice.invoiceId
                ? invoice.total : try ledger.payments.charge(key: .invoice(lineItemId))?.amountTotal
        }
        // The item before this one in time, not the latest delivered: Stripe keeps no order, and a renewal that
        // comes after the next one still follows the period before it.
        guard
            let (previous, previousPaid) = try history.preceding(
                invoice.period.start,
                except: LineItemID(invoice.invoiceId)
            )
        else {
            return .wait("the subscription's start is not recorded yet")
        }
        do {
            let startedAt = history.items.first { $0.lineItemId == buy }?.creationDate
            let item = try next(
                invoice,
                after: previous,
                paid: previousPaid,
                at: exchangeRate,
                planChange: planChange,
                startedAt: startedAt
            )
            // Items delivered before this one that come after it count its days now: each whose days change is
            // restated (Apple: "Reporting corrections").
            let following = try history.following(item)
            try restate(following, of: history, on: chain, in: &change)
            purchase.periodEnd = history.periodEnd(adding: item) ?? item.subscriptionEndDate
            purchase.paidDays = Int64((following.last ?? item).subscriptionDaysOfPaidService)
            change.purchase = purchase
            change.charges = charges
            change.outcome = "\(what) recorded; line item \(item.lineItemId) queued for Apple"
            let body = try Self.encode(.subscriptionBuy(item))
            try place(
                (item.lineItemId, item.creationDate, body),
                what: what,
                purchaseToken: token,
                chain: chain,
                in: &change
            )
            let restated = (change.restatements.map(\.lineItemId) + change.heldRewrites.map(\.lineItemId)).map(
                \.rawValue
            )
            if !restated.isEmpty {
                change.outcome +=
                    "; the days of paid service of \(restated.joined(separator: ", ")) restated (delivered before this "
                    + "earlier \(what))"
            }
        } catch let error as AppleLineItemError {
            change.outcome = .notReportable("\(what) recorded; not reportable: \(error)")
        }
        return .apply(change)
    }

    /// The end of the period `purchase`'s subscription had at `instant`, from its items in time; the latest end it
    /// recorded when it has none (nothing reported).
    private func currentPeriodEnd(of purchase: PurchaseRecord, at instant: Int64) throws -> Int64 {
        if let buy = purchase.buyLineItemId {
            let chain = try ledger.reports.purchaseLineItems(containing: buy)
            let history = SubscriptionHistory(chain: chain, startedBy: buy) { _ in nil }
            if let end = history.periodEnd(at: instant) { return end }
        }
        return purchase.periodEnd ?? 0
    }

    /// The subscription's next line item after `previous`: a `RENEWAL`, or a `SUBSCRIPTION_CHANGE`.
    private func next(
        _ invoice: InvoicePayment,
        after previous: SubscriptionBuyLineItem,
        paid previousPaid: Bool?,
        at exchangeRate: ExchangeRate?,
        planChange: Bool,
        startedAt: Int64?
    ) throws -> SubscriptionBuyLineItem {
        planChange
            ? try lineItems.subscriptionChange(
                invoice,
                previous: previous,
                previousPaid: previousPaid,
                exchangeRate: exchangeRate,
                startedAt: startedAt
            )
            : try lineItems.renewal(
                invoice,
                previous: previous,
                previousPaid: previousPaid,
                exchangeRate: exchangeRate,
                startedAt: startedAt
            )
    }

    /// The renewal on the purchase (its period runs on), and for a renewal the backend's webhook: a plan change
    /// keeps the subscription running, and the backend hears of renewals and ends, not of changes.
    private func recorded(
        _ invoice: InvoicePayment,
        on purchase: inout PurchaseRecord,
        what: String,
        planChange: Bool,
        event: (provider: ProviderID, eventId: String),
        at now: Int64
    ) throws -> PaymentChange {
        var change = PaymentChange(event: event, outcome: "\(what) recorded", at: now)
        // A period paid after the latest one was taken back (a refund that ended the subscription) entitles again:
        // the person pays for it. A renewal delivered late, of an earlier period, does not.
        if !planChange, purchase.status == .refunded || purchase.status == .partiallyRefunded,
            invoice.period.end > purchase.periodEnd ?? 0
        {
            purchase.status = .paid
        }
        // Until its items are known (`SubscriptionHistory.periodEnd`, which decides when they are): a renewal never
        // shortens the period (one delivered late is an earlier one), a plan change's period replaces the one it
        // changes (a downgrade ends a yearly period early).
        purchase.periodEnd = planChange ? invoice.period.end : max(purchase.periodEnd ?? 0, invoice.period.end)
        purchase.updatedAt = now
        change.purchase = purchase
        if !planChange {
            change.webhooks = try entitlements.event(
                .subscriptionRenewed,
                purchase: purchase,
                cause: invoice.invoiceId,
                at: now
            )
        }
        return change
    }

    /// A subscription invoice's payment under every name a later refund may use: its invoice, and its payment
    /// once the provider names it. Its line item is the invoice's own (a renewal's), or the start's (the first
    /// invoice, which the start reported).
    static func charges(of invoice: InvoicePayment, purchaseId: String, lineItemId: LineItemID) -> [PurchaseCharge] {
        // The invoice keeps the period's price (`SubscriptionHistory`: a period paid from credit is paid service);
        // the payment what it charged, all a refund or chargeback of it can take back (a refund of more than is left
        // of it waits for a chargeback's reversal, `issuedRefund`). Stripe names a payment later
        // (`invoicePaymentLinked`), and its refunds carry Stripe's own running total.
        let priced: [(ChargeKey, total: Int64, tax: Int64)] =
            [(.invoice(invoice.invoiceId), invoice.total, invoice.tax)]
            + (invoice.paymentIntentId.map { [(.payment($0), invoice.charged, invoice.chargedTax)] } ?? [])
        return priced.map { key, total, tax in
            PurchaseCharge(
                chargeKey: key,
                purchaseId: purchaseId,
                lineItemId: lineItemId,
                amountTotal: total,
                amountTax: tax,
                amountRefunded: 0,
                createdAt: invoice.paidAt
            )
        }
    }

    /// The items in `corrected` whose days of paid service differ from the version the ledger holds, made anew in
    /// `change`: restated where they went to a token (`restatements`), rewritten in place while they await one
    /// (`heldRewrites`: Apple has never seen them). One set aside for the operator's correction keeps its version:
    /// the operator restates it whole.
    private func restate(
        _ corrected: [SubscriptionBuyLineItem],
        of history: SubscriptionHistory,
        on chain: [StoredLineItem],
        in change: inout PaymentChange
    ) throws {
        let days = Dictionary(history.items.map { ($0.lineItemId, $0.subscriptionDaysOfPaidService) }) { $1 }
        let actions = ReportActions(ledger: ledger)
        for item in corrected where days[item.lineItemId] != item.subscriptionDaysOfPaidService {
            guard let stored = chain.last(where: { $0.lineItemId == item.lineItemId }), !stored.isSetAside,
                case .subscriptionBuy(var version) = try JSONDecoder().decode(
                    LineItem.self,
                    from: Data(stored.body.utf8)
                )
            else { continue }
            version.subscriptionDaysOfPaidService = item.subscriptionDaysOfPaidService
            if stored.awaitingTokenSince != nil {
                change.heldRewrites.append((stored.rowId, item.lineItemId, try Self.encode(.subscriptionBuy(version))))
            } else {
                let body = try actions.newVersion(.subscriptionBuy(version), on: stored.externalPurchaseId)
                change.restatements.append((stored.externalPurchaseId, item.lineItemId, body))
            }
        }
    }
}
