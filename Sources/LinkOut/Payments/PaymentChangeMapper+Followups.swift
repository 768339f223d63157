import Domain
import ExternalPurchase
import Foundation
import Payments
import Storage

/// Renewals and refunds: facts that refer to a purchase recorded before.
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
        else { return .wait("the \(what)'s subscription has no purchase yet") }
        var invoice = named
        if invoice.periodRunsToCurrentEnd {
            invoice.period = SubscriptionPeriod(
                start: invoice.paidAt,
                end: max(purchase.periodEnd ?? invoice.paidAt, invoice.paidAt)
            )
        }
        var change = PaymentChange(event: event, outcome: "\(what) recorded", at: now)
        purchase.periodEnd = max(purchase.periodEnd ?? 0, invoice.period.end)
        purchase.updatedAt = now
        change.purchase = purchase
        // A plan change keeps the subscription running: the backend hears of renewals and ends, not of changes.
        if !planChange {
            change.webhooks = try entitlements.event(
                .subscriptionRenewed,
                purchase: purchase,
                cause: invoice.invoiceId,
                at: now
            )
        }
        guard let token = purchase.externalPurchaseId, let buy = purchase.buyLineItemId else {
            change.outcome = "\(what) recorded; nothing to report to Apple"
            return .apply(change)
        }
        if let reason = try heldBehind(token) {
            return .holdBehind(token: token, reason: reason)
        }
        let charges = ([.invoice(invoice.invoiceId)] + (invoice.paymentIntentId.map { [.payment($0)] } ?? [])).map {
            key in
            PurchaseCharge(
                chargeKey: key,
                purchaseId: purchase.purchaseId,
                lineItemId: LineItemID(invoice.invoiceId),
                amountTotal: invoice.total,
                amountTax: invoice.tax,
                amountRefunded: 0,
                createdAt: invoice.paidAt
            )
        }
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
        // The purchase's items on whichever token each went (a renewal may be on another token of the customer, or
        // held): the latest one carries the paid days on.
        let chain = try ledger.reports.purchaseLineItems(containing: buy)
        let items = chain.compactMap { stored -> SubscriptionBuyLineItem? in
            guard
                case .subscriptionBuy(let item) = try? JSONDecoder().decode(LineItem.self, from: Data(stored.body.utf8))
            else { return nil }
            return item.lineItemId == buy || item.referenceLineItemId == buy ? item : nil
        }
        guard let previous = items.max(by: { $0.subscriptionStartDate < $1.subscriptionStartDate }) else {
            return .wait("the subscription's start is not recorded yet")
        }
        // A renewal's or plan change's price is the invoice total its charge was recorded with.
        let previousPaid = try PaidService.latestIsPaid(items) { lineItemId in
            guard lineItemId != buy.rawValue else { return nil }
            return try ledger.payments.charge(key: .invoice(lineItemId))?.amountTotal
        }
        do {
            let item =
                planChange
                ? try lineItems.subscriptionChange(
                    invoice,
                    previous: previous,
                    previousPaid: previousPaid,
                    exchangeRate: exchangeRate
                )
                : try lineItems.renewal(
                    invoice,
                    previous: previous,
                    previousPaid: previousPaid,
                    exchangeRate: exchangeRate
                )
            let body = try Self.encode(.subscriptionBuy(item))
            change.charges = charges
            purchase.periodEnd = max(purchase.periodEnd ?? 0, item.subscriptionEndDate)
            purchase.paidDays = Int64(item.subscriptionDaysOfPaidService)
            purchase.updatedAt = now
            change.purchase = purchase
            change.outcome = "\(what) recorded; line item \(item.lineItemId) queued for Apple"
            try place(
                item,
                what: what,
                body: body,
                purchaseToken: token,
                chain: chain,
                in: &change
            )
        } catch let error as AppleLineItemError {
            change.outcome = .notReportable("\(what) recorded; not reportable: \(error)")
        }
        return .apply(change)
    }

    /// A refund or chargeback, whichever way its provider states the amount: a running total is reported as far
    /// as it is new; an amount of its own is added to what was refunded before, made once by its id.
    func refunded(_ refund: Refund, event: (provider: ProviderID, eventId: String), at now: Int64) throws -> Decision {
        switch refund.amount {
        case .refundedSoFar(let total, let fully):
            let cumulative = ChargeRefund(
                chargeId: refund.chargeId,
                paymentId: refund.paymentId,
                amountRefunded: total,
                currency: refund.currency,
                fullyRefunded: fully,
                refundedAt: refund.refundedAt
            )
            return try self.refund(cumulative, event: event, at: now)
        case .this(let amount, tax: .some(let tax)):
            return try issuedRefund(refund, amount: amount, tax: tax, event: event, at: now)
        case .this(let amount, tax: nil):
            return try chargeback(refund, amount: amount, event: event, at: now)
        }
    }

    /// A chargeback whose provider states no tax of its own (a lost Stripe dispute): a `REFUND` of the disputed
    /// amount on top of what was refunded before (Apple reports chargebacks as refunds: "Reporting tokens with
    /// transactions"), keyed on the dispute, the tax split in the buy's proportion.
    private func chargeback(
        _ refund: Refund,
        amount: Int64,
        event: (provider: ProviderID, eventId: String),
        at now: Int64
    ) throws -> Decision {
        guard let charge = try ledger.payments.charge(key: .payment(refund.paymentId)) else {
            return .wait("the disputed payment has no purchase yet")
        }
        // Amounts are at most 10^12 (`ProviderJSON`): the sum cannot overflow.
        let taken = min(charge.amountRefunded + amount, charge.amountTotal)
        let chargeback = ChargeRefund(
            chargeId: refund.chargeId,
            paymentId: refund.paymentId,
            amountRefunded: taken,
            currency: refund.currency,
            fullyRefunded: taken >= charge.amountTotal,
            refundedAt: refund.refundedAt,
            disputeId: refund.id
        )
        return try self.refund(chargeback, event: event, at: now)
    }

    /// Puts a renewal on a token of the customer active at its date (`LineItemPlacement`): the purchase's token
    /// while it is active, else another; none known → held, and the outcome says so (it is logged as a warning
    /// and shown on the dashboard until the app forwards such a token).
    private func place(
        _ item: SubscriptionBuyLineItem,
        what: String,
        body: String,
        purchaseToken token: ExternalPurchaseID,
        chain: [StoredLineItem],
        in change: inout PaymentChange
    ) throws {
        guard let purchaseToken = try ledger.tokens.token(token) else {
            change.lineItems = [(token, item.lineItemId, body)]
            return
        }
        let placement = LineItemPlacement(ledger: ledger)
        if let target = try placement.token(at: item.creationDate, purchaseToken: purchaseToken, chain: chain) {
            change.lineItems = [(target.token.externalPurchaseId, item.lineItemId, body)]
            if target.token.externalPurchaseId != token {
                change.outcome +=
                    " on token \(target.token.externalPurchaseId), active at its date (the purchase's expired)"
            }
        } else {
            change.heldLineItems = [(token, item.lineItemId, body)]
            change.outcome =
                "\(what) recorded; line item \(item.lineItemId) held: no token of the customer is active at its date"
        }
    }

    func refund(_ refund: ChargeRefund, event: (provider: ProviderID, eventId: String), at now: Int64) throws
        -> Decision
    {
        guard let charge = try ledger.payments.charge(key: .payment(refund.paymentId)),
            var purchase = try ledger.payments.purchase(id: charge.purchaseId)
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
        if charge.lineItemId == purchase.buyLineItemId || purchase.kind == .oneTime {
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
        guard let token = purchase.externalPurchaseId, purchase.buyLineItemId != nil else {
            change.outcome = "refund recorded; nothing to report to Apple"
            return .apply(change)
        }
        // Its buy is held for an exchange rate: the refund follows it (with the buy's rate; Apple:
        // ExchangeRateMismatchError).
        if let reason = try heldBehind(token) {
            return .holdBehind(token: token, reason: reason)
        }
        // The refunded item may be a renewal on another token of the customer: the refund goes on the token of
        // the item it refers to (Apple looks the reference up on the report's token).
        let versions = try ledger.reports.purchaseLineItems(containing: charge.lineItemId).filter {
            $0.lineItemId == charge.lineItemId
        }
        guard let first = versions.first else { return .wait("the refunded buy's line item is not recorded yet") }
        // The version Apple holds or will: the latest one it never refused (a restatement is stored after the
        // version it replaces). One set aside for correction is not at Apple, and a refund referring to it would
        // be refused (`NotFoundError`): the refund waits for the operator, as long as that takes.
        guard let stored = versions.last(where: { $0.correction == nil }) else {
            guard versions.contains(where: \.needsCorrection) else {
                change.outcome = .notReportable(
                    "refund recorded; not reportable: line item \(charge.lineItemId) was withdrawn"
                )
                return .apply(change)
            }
            return .holdBehind(
                token: first.externalPurchaseId,
                reason: "the refunded line item \(charge.lineItemId) is set aside for correction"
            )
        }
        // A renewal held for a token may wait weeks (until the app forwards one): the refund never gives up on it.
        guard stored.heldSince == nil else {
            return .holdBehind(
                token: stored.externalPurchaseId,
                reason: "the refunded renewal is held until a token of the customer can carry it"
            )
        }
        guard let buy = try? JSONDecoder().decode(LineItem.self, from: Data(stored.body.utf8)) else {
            return .wait("the refunded buy's line item is not recorded yet")
        }
        do {
            if var item = try lineItems.refund(refund, of: buy, alreadyRefunded: charge.amountRefunded) {
                // The net is the buy's after what Apple holds: a refund retracted since (a reversed chargeback,
                // an operator's retraction) no longer counts, though the provider's cumulative amount has it.
                item.netAmountTaxExclusive = try netAfter(
                    item,
                    on: stored.externalPurchaseId
                )
                change.lineItems = [(stored.externalPurchaseId, item.lineItemId, try Self.encode(.refund(item)))]
                change.outcome = "refund recorded; line item \(item.lineItemId) queued for Apple"
            } else {
                change.outcome = "refund already reported"
            }
        } catch let error as AppleLineItemError {
            change.outcome = .notReportable("refund recorded; not reportable: \(error)")
        }
        return .apply(change)
    }

    /// The buy's net once `refund` joins what the token holds (`PurchaseNet`): never below 0.
    private func netAfter(_ refund: RefundLineItem, on token: ExternalPurchaseID) throws -> Int64 {
        let holds = try LineItemScreen(ledger: ledger).standing(on: token)
        return max(0, PurchaseNet.ofBuy(refund.referenceLineItemId, in: holds + [.refund(refund)]))
    }
}
