import Domain
import ExternalPurchase
import Foundation
import Payments
import Storage

/// Refunds and chargebacks: facts that refer to a payment recorded before.
extension PaymentChangeMapper {
    /// A refund or chargeback, whichever way its provider states the amount: a running total is reported as far
    /// as it is new; an amount of its own is added to what was refunded before, made once by its id.
    func refunded(_ refund: Refund, event: (provider: ProviderID, eventId: String), at now: Int64) throws -> Decision {
        if let refusal = try currencyRefusal(of: "a refund", refund.currency, paymentId: refund.paymentId) {
            return .apply(PaymentChange(event: event, outcome: .notReportable(refusal), at: now))
        }
        switch refund.amount {
        case .refundedSoFar(let total, let fully):
            guard let charge = try ledger.payments.charge(key: .payment(refund.paymentId)) else {
                return .wait("the refunded payment \(PaymentStore.noPurchaseYet(refund.paymentId))")
            }
            // Stripe's running total counts refunds only, the payment's refunded total lost disputes too (in
            // whatever order they came): the refunds' total is set beside what disputes took, so a refund
            // delivered after a dispute is not taken for one recorded before it.
            let disputed = try disputedAmount(of: charge)
            let combined = min(Int64.saturating(total, plus: disputed), charge.amountTotal)
            let cumulative = ChargeRefund(
                chargeId: refund.chargeId,
                paymentId: refund.paymentId,
                amountRefunded: combined,
                currency: refund.currency,
                fullyRefunded: fully || combined >= charge.amountTotal,
                refundedAt: refund.refundedAt,
                // Keyed on Stripe's running total, as it always was: the same refund has the same id however
                // many disputes came before it.
                refundId: String(total)
            )
            return try self.refund(cumulative, event: event, at: now)
        case .this(let amount, tax: .some(let tax)):
            return try issuedRefund(refund, amount: amount, tax: tax, event: event, at: now)
        case .this(let amount, tax: nil):
            return try chargeback(refund, amount: amount, event: event, at: now)
        }
    }

    /// Nil when a refund (or a chargeback's reversal, `what`) in `currency` is in the currency of the payment it
    /// names; else why it is none of that payment. Its amount cannot be set against the payment's: recorded, a
    /// running total in another currency stood for the payment's refunded total, and the real refund after it was
    /// measured against it and reported short, or not at all; a reversal withdrew a chargeback it could not be.
    /// It changes nothing: not the refunded total, the purchase's status nor the developer's webhooks.
    func currencyRefusal(of what: String, _ currency: CurrencyCode, paymentId: String) throws -> String? {
        guard let charge = try ledger.payments.charge(key: .payment(paymentId)),
            let purchase = try ledger.payments.purchase(id: charge.purchaseId)
        else { return nil }
        // The refunded line item's currency where it is recorded (the version Apple holds, as `refund` reads
        // it); else the purchase's, for its buy only: a renewal is charged in whatever currency its invoice is
        // (Paddle lets a subscription's change), and one not recorded has none to go by.
        let versions = try ledger.reports.purchaseLineItems(containing: charge.lineItemId).filter {
            $0.lineItemId == charge.lineItemId
        }
        let paid: CurrencyCode
        // Every version set aside: the refund waits behind it (`refund`), and is checked when it is placed.
        if !versions.isEmpty, !versions.contains(where: { !$0.isSetAside }) {
            return nil
        } else if let stored = versions.last(where: { !$0.isSetAside }) {
            guard let item = try? JSONDecoder().decode(LineItem.self, from: Data(stored.body.utf8)) else { return nil }
            paid = item.common.pricingCurrency
        } else if charge.lineItemId == purchase.buyChargeLineItemId {
            paid = purchase.currency
        } else {
            return nil
        }
        guard currency != paid else { return nil }
        return
            "not recorded: \(what) in \(currency.rawValue) of a payment in \(paid.rawValue) (\(charge.chargeKey)) "
            + "is none of it; the payment's refunded total is unchanged, and one in its currency is reported in full"
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
            return .wait("the disputed payment \(PaymentStore.noPurchaseYet(refund.paymentId))")
        }
        // Made once per dispute: the same dispute delivered again (under another event id) adds nothing.
        let disputeId = refund.id ?? event.eventId
        let marker = Self.issuedRefundKey(disputeId)
        guard try ledger.payments.charge(key: marker) == nil else {
            return .apply(PaymentChange(event: event, outcome: "dispute \(disputeId) already recorded", at: now))
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
            disputeId: disputeId
        )
        let decision = try self.refund(chargeback, event: event, at: now)
        guard case .apply(var change) = decision else { return decision }
        // Worked out from this read of the charge: written only while its total is still this one.
        change.refundedBefore = charge.amountRefunded
        // What it took of the payment, for the refunds' running total beside it (`disputedAmount`).
        change.charges.append(
            Self.refundMarker(
                disputeId,
                of: charge,
                amount: amount,
                tax: 0,
                counted: taken - charge.amountRefunded,
                at: refund.refundedAt
            )
        )
        return .apply(change)
    }

    /// What lost disputes took of `charge` (their markers' `countedAmount`): Stripe's running total of refunds
    /// leaves them out. Disputes recorded before their markers were kept count nothing here.
    private func disputedAmount(of charge: PurchaseCharge) throws -> Int64 {
        try ledger.payments.charges(purchaseId: charge.purchaseId).reduce(Int64(0)) { sum, marker in
            guard case .refund = marker.chargeKey, marker.lineItemId == charge.lineItemId else { return sum }
            return Int64.saturating(sum, plus: marker.countedAmount)
        }
    }

    func refund(_ refund: ChargeRefund, event: (provider: ProviderID, eventId: String), at now: Int64) throws
        -> Decision
    {
        guard let charge = try ledger.payments.charge(key: .payment(refund.paymentId)),
            var purchase = try ledger.payments.purchase(id: charge.purchaseId)
        else { return .wait("the refunded payment \(PaymentStore.noPurchaseYet(refund.paymentId))") }
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
        change.refundedBefore = charge.amountRefunded
        change.purchaseAsRead = purchase
        // A one-time purchase is what its payment was. A subscription's buy taken back ends it only while no
        // later payment stands (a renewal paid after it grants again, `recorded`): before, a refunded first payment
        // ended a subscription paid every month since. A refund of one renewal leaves the subscription as it was.
        if try purchase.kind == .oneTime
            || (charge.lineItemId == purchase.buyChargeLineItemId && paysLatestPeriod(charge))
        {
            purchase.status = refund.fullyRefunded ? .refunded : .partiallyRefunded
        }
        purchase.updatedAt = now
        change.purchase = purchase
        change.webhooks = try entitlements.event(
            .purchaseRefunded,
            purchase: purchase,
            // The refund's or chargeback's own id in it: after a chargeback's reversal the refunded total comes
            // back to a figure it had, and the same cause made the same event, which the backend never heard of.
            cause: "\(charge.chargeKey):\(refund.amountRefunded)"
                + (refund.disputeId.map { ":dispute:\($0)" } ?? refund.refundId.map { ":refund:\($0)" } ?? ""),
            at: now
        )
        guard let token = purchase.externalPurchaseId, purchase.isReported else {
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
        guard let stored = versions.last(where: { !$0.isSetAside }) else {
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
        guard stored.awaitingTokenSince == nil else {
            return .holdBehind(
                token: stored.externalPurchaseId,
                reason: "the refunded renewal is held until a token of the customer can carry it"
            )
        }
        guard let buy = try? JSONDecoder().decode(LineItem.self, from: Data(stored.body.utf8)) else {
            return .wait("the refunded buy's line item is not recorded yet")
        }
        do {
            // The tax Apple holds of the buy's refunds, not the provider's figures for them: a refund that
            // completed the buy took the rest of its tax, and after a chargeback's reversal the next one counted
            // from Paddle's figure gave back more tax than the buy had.
            let holds = try LineItemScreen(ledger: ledger).standing(on: stored.externalPurchaseId)
            let held = PurchaseNet.refunds(ofBuy: buy.common.lineItemId, in: holds)
            if var item = try lineItems.refund(refund, of: buy, alreadyRefunded: charge.amountRefunded, held: held) {
                // The net is the buy's after what Apple holds: a refund retracted since (a reversed chargeback,
                // an operator's retraction) no longer counts, though the provider's cumulative amount has it.
                item.netAmountTaxExclusive = Self.netAfter(item, in: holds)
                change.lineItems = [(stored.externalPurchaseId, item.lineItemId, try Self.encode(.refund(item)))]
                change.outcome = "refund recorded; line item \(item.lineItemId) queued for Apple"
            } else {
                // Recorded above as a larger refunded total, but nothing new in Apple's units: the growth rounds
                // to less than a milli-unit of the reporting currency, or the buy is refunded in full already.
                change.outcome = "refund recorded; nothing new for Apple (under a milli-unit, or the buy refunded)"
            }
        } catch let error as AppleLineItemError {
            change.outcome = .notReportable("refund recorded; not reportable: \(error)")
        }
        return .apply(change)
    }

    /// Whether `charge` paid its subscription's latest period: no payment of the purchase made after it stands
    /// (refund and reversal markers aside, a payment of nothing, and a payment refunded in full). A payment is
    /// stored under each name a refund may use (a renewal's invoice and its payment), all with its line item.
    private func paysLatestPeriod(_ charge: PurchaseCharge) throws -> Bool {
        let payments = try ledger.payments.charges(purchaseId: charge.purchaseId).filter {
            switch $0.chargeKey {
            case .payment, .invoice: true
            case .refund, .reversal: false
            }
        }
        // A payment of nothing (a downgrade invoiced at 0) pays for no period.
        func standsLater(_ names: [PurchaseCharge]) -> Bool {
            let later = names.contains { $0.createdAt > charge.createdAt && $0.amountTotal > 0 }
            let takenBack = names.contains { $0.amountTotal > 0 && $0.amountRefunded >= $0.amountTotal }
            return later && !takenBack
        }
        return !Dictionary(grouping: payments, by: \.lineItemId).contains { lineItemId, names in
            lineItemId != charge.lineItemId && standsLater(names)
        }
    }

    /// The buy's net once `refund` joins what the token holds (`PurchaseNet`): never below 0.
    private static func netAfter(_ refund: RefundLineItem, in holds: [LineItem]) -> Int64 {
        max(0, PurchaseNet.ofBuy(refund.referenceLineItemId, in: holds + [.refund(refund)]))
    }
}
