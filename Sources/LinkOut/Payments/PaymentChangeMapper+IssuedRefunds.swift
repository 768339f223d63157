import Domain
import ExternalPurchase
import Lifecycle
import Payments
import Storage

/// Refunds and chargebacks that are records of their own (Paddle's adjustments): each is made once, however
/// often and in whatever order it is delivered, and adds its amount to what the payment had refunded before.
extension PaymentChangeMapper {
    /// Stored with the change as a charge of the purchase under this key, so the same refund delivered again (an
    /// adjustment created approved and then updated) finds it and changes nothing.
    static func issuedRefundKey(_ refundId: String) -> ChargeKey { .refund(refundId) }

    /// The marker of a refund or chargeback of its own (`issuedRefundKey`) on `charge`: its amount and tax, the part
    /// of it the payment's refunded total did not take (`PurchaseCharge.countedAmount`, what a reversal gives back
    /// is the rest), dated never before the charge (the money views take a line item's price from its earliest
    /// charge row).
    static func refundMarker(
        _ id: String,
        of charge: PurchaseCharge,
        amount: Int64,
        tax: Int64,
        counted: Int64,
        at refundedAt: Int64
    ) -> PurchaseCharge {
        PurchaseCharge(
            chargeKey: issuedRefundKey(id),
            purchaseId: charge.purchaseId,
            lineItemId: charge.lineItemId,
            amountTotal: amount,
            amountTax: tax,
            amountRefunded: amount - counted,
            createdAt: max(refundedAt, charge.createdAt)
        )
    }

    func issuedRefund(
        _ issued: Refund,
        amount: Int64,
        tax: Int64,
        event: (provider: ProviderID, eventId: String),
        at now: Int64
    ) throws -> Decision {
        guard let charge = try ledger.payments.charge(key: .payment(issued.paymentId)) else {
            return .wait("the refunded payment \(PaymentStore.noPurchaseYet(issued.paymentId))")
        }
        let refundId = issued.id ?? event.eventId
        let marker = Self.issuedRefundKey(refundId)
        guard try ledger.payments.charge(key: marker) == nil else {
            return .apply(PaymentChange(event: event, outcome: "refund \(refundId) already recorded", at: now))
        }
        // A refund or chargeback of more than is left is one of money a chargeback took: Paddle takes back no more
        // than was paid, so that chargeback's reversal (money back to the seller) comes first, in whatever order
        // Paddle delivers them. Applied now, the refund was capped to nothing and dropped for good, and a
        // chargeback capped to what the other left stayed short at Apple once the other was reversed.
        let left = max(0, charge.amountTotal - charge.amountRefunded)
        if amount > left {
            let purchase = try ledger.payments.purchase(id: charge.purchaseId)
            let standing = try chargebackMayHaveTaken(from: charge, chargeId: issued.chargeId, of: purchase)
            // Before the purchase is reported that is assumed for a refund; a chargeback then takes what was left,
            // as one of the whole payment after a partial refund does (below), and stays so after a reversal: which
            // chargeback took money is told by line items, which an unreported purchase has none of.
            if issued.kind == .chargeback ? standing && purchase?.isReported == true : standing {
                let what = issued.kind == .chargeback ? "chargeback" : "refund"
                // A reversal can come weeks after its chargeback; the reversal wakes this one.
                return Self.waitNeverGivenUp(
                    behind: purchase?.externalPurchaseId,
                    "the \(what) of \(amount) is more than the \(left) left of the payment: waiting for a "
                        + "chargeback's reversal"
                )
            }
            // With no chargeback that took money, no reversal can come: a refund waits as any event does, and is
            // given up after three days rather than holding the month's close open for good.
            if issued.kind != .chargeback {
                return .wait(
                    "the refund of \(amount) is more than the \(left) left of the payment, and no chargeback took any"
                )
            }
        }
        // Amounts are at most 10^12 (`ProviderJSON`): the sum cannot overflow. Never more than was paid: a
        // chargeback of the whole payment after a partial refund counts what was left.
        let refunded = min(charge.amountRefunded + amount, charge.amountTotal)
        // Capped so, it took back that share of the tax Paddle states for the whole amount (the buy's tax left at
        // Apple, after an operator's retraction, would otherwise all go with two thirds of the money).
        let taken = refunded - charge.amountRefunded
        let takenTax = taken < amount && amount > 0 ? AppleLineItems.mulDivRounded(tax, taken, amount) : tax
        // The provider states each refund's tax: the tax refunded before is the sum of the earlier ones', less a
        // chargeback's that was reversed (its money, and so its tax, came back).
        let charges = try ledger.payments.charges(purchaseId: charge.purchaseId)
        let reversed = Set(charges.filter(\.isReversal).map(\.lineItemId))
        let taxBefore = charges.filter {
            guard case .refund(let refundId) = $0.chargeKey, $0.lineItemId == charge.lineItemId else { return false }
            return !reversed.contains(.chargeback(of: issued.chargeId, dispute: refundId))
        }.reduce(Int64(0)) { $0 + $1.amountTax }
        let cumulative = ChargeRefund(
            chargeId: issued.chargeId,
            paymentId: issued.paymentId,
            amountRefunded: refunded,
            currency: issued.currency,
            fullyRefunded: refunded >= charge.amountTotal,
            refundedAt: issued.refundedAt,
            // A chargeback's line item is keyed on it, as a Stripe dispute's is (`AppleLineItems.refund`); a
            // refund's on its id too, since a reversal can bring the cumulative amount back to one used before.
            disputeId: issued.kind == .chargeback ? refundId : nil,
            refundId: issued.kind == .chargeback ? nil : refundId,
            statedTax: ChargeRefund.StatedTax(before: taxBefore, after: taxBefore + takenTax)
        )
        let decision = try refund(cumulative, event: event, at: now)
        guard case .apply(var change) = decision else { return decision }
        // Worked out from this read of the charge: written only while its total is still this one.
        change.refundedBefore = charge.amountRefunded
        if issued.kind == .chargeback {
            // A reversal delivered before it waits for it.
            change.wakesEventsBehind = try ledger.payments.purchase(id: charge.purchaseId)?.externalPurchaseId
        }
        change.charges.append(
            Self.refundMarker(
                refundId,
                of: charge,
                amount: amount,
                tax: takenTax,
                counted: taken,
                at: issued.refundedAt
            )
        )
        return .apply(change)
    }

    /// A chargeback given back to the seller: the chargeback's `REFUND` is withdrawn at Apple as an operator's
    /// `linkout report retract` would (Apple's "Reporting corrections": the same `lineItemId` again, `restatement` and
    /// `erroneouslySubmitted` true), in the change that marks the reversal done. Paddle's reversal does not name the
    /// chargeback it reverses: it is the one of the same payment and amount not reversed before. Until Apple has
    /// accepted the chargeback's `REFUND` there is nothing to retract yet, and the reversal waits.
    func chargebackReversed(
        _ reversal: ChargebackReversal,
        event: (provider: ProviderID, eventId: String),
        at now: Int64
    )
        throws -> Decision
    {
        guard let charge = try ledger.payments.charge(key: .payment(reversal.paymentId)) else {
            return .wait("the charged-back payment \(PaymentStore.noPurchaseYet(reversal.paymentId))")
        }
        let marker = Self.reversalKey(reversal.reversalId)
        guard try ledger.payments.charge(key: marker) == nil else {
            return .apply(
                PaymentChange(event: event, outcome: "reversal \(reversal.reversalId) already recorded", at: now)
            )
        }
        // A chargeback in another currency was never recorded (`refunded`): no reversal in one undoes another.
        if let refusal = try currencyRefusal(
            of: "a chargeback's reversal",
            reversal.currency,
            paymentId: reversal.paymentId
        ) {
            return .apply(PaymentChange(event: event, outcome: .notReportable(refusal), at: now))
        }
        let charges = try ledger.payments.charges(purchaseId: charge.purchaseId)
        let reversed = Set(charges.filter(\.isReversal).map(\.lineItemId))
        // The first chargeback of this amount whose REFUND Apple was sent and no reversal withdrew.
        var item: StoredLineItem?
        var chargedBack: (charge: PurchaseCharge, lineItemId: LineItemID, versions: [StoredLineItem])?
        let purchase = try ledger.payments.purchase(id: charge.purchaseId)
        let reported = purchase?.isReported == true
        for candidate in charges where candidate.amountTotal == reversal.amount {
            guard case .refund(let refundId) = candidate.chargeKey else { continue }
            let lineItemId = LineItemID.chargeback(of: reversal.paymentId, dispute: refundId)
            guard !reversed.contains(lineItemId) else { continue }
            // A refund of the same amount is recorded the same way; a chargeback of a purchase Apple holds has its
            // own line item (`<payment>:dispute:<id>`), which tells them apart.
            let versions = try ledger.reports.lineItemVersions(lineItemId)
            // A chargeback that took nothing (the payment was refunded in full before it) made no line item.
            guard !reported || !versions.isEmpty || candidate.countedAmount == 0 else { continue }
            chargedBack = (candidate, lineItemId, versions)
            // The latest version Apple holds is the one a retraction restates (Apple uses a line item's most recent
            // version).
            item = versions.last { !$0.isSetAside }
            if item != nil { break }
        }
        // Paddle delivers notifications in no set order: a reversal that came before its chargeback waits for it,
        // as a refund waits for its payment (applied now, the chargeback after it would stand at Apple for good).
        guard let chargedBack else {
            let reason = "no chargeback of \(reversal.amount) of this payment is recorded yet"
            // The chargeback may wait behind a held renewal for weeks: so does its reversal. With nothing waiting
            // there (its chargeback never came, or was given up), it is given up as any event is, after three days,
            // and does not hold the month's close open for good.
            guard let token = purchase?.externalPurchaseId,
                try ledger.payments.eventsWaiting(behind: token, besides: event) > 0
            else { return .wait(reason) }
            return .holdBehind(token: token, reason: reason)
        }
        // The money came back, whatever Apple holds: what the payment had refunded goes down by what the
        // chargeback took (`PurchaseCharge.countedAmount`), so a later refund is not capped, and the purchase is
        // no longer refunded by it.
        let givenBack = chargedBack.charge.countedAmount
        var change = PaymentChange(event: event, outcome: "chargeback reversed", at: now)
        change.refundReversal = (charge.chargeKey, givenBack)
        // A refund of the money the chargeback took waited for this (`issuedRefund`).
        change.wakesEventsBehind = purchase?.externalPurchaseId
        // Only a reversal that gave money back: a chargeback that took nothing (the payment refunded in full
        // before it) made no `purchase.refunded`, and its reversal reinstates nothing.
        if var purchase, givenBack > 0 {
            if purchase.status == .refunded || purchase.status == .partiallyRefunded {
                change.purchaseAsRead = purchase
                let left = max(0, charge.amountRefunded - givenBack)
                purchase.status = left == 0 ? .paid : left >= charge.amountTotal ? .refunded : .partiallyRefunded
                purchase.updatedAt = now
                change.purchase = purchase
            }
            // The backend heard of the chargeback (`purchase.refunded`): it hears of its reversal too, or it keeps
            // the person's entitlement taken while linkout's API and the app's entitlements say it stands.
            change.webhooks = try entitlements.event(
                .purchaseReinstated,
                purchase: purchase,
                cause: "\(charge.chargeKey):\(marker)",
                at: now
            )
        }
        func marked(_ lineItemId: LineItemID) -> [PurchaseCharge] {
            [
                PurchaseCharge(
                    chargeKey: marker,
                    purchaseId: charge.purchaseId,
                    lineItemId: lineItemId,
                    // A marker, not money: the reversal's amount is the chargeback's, which stays recorded.
                    amountTotal: 0,
                    amountTax: 0,
                    amountRefunded: 0,
                    createdAt: reversal.reversedAt
                )
            ]
        }
        guard let item else {
            // The marker names the chargeback (never matched again; its tax no longer counts as refunded), and a
            // REFUND of it set aside with its buy is settled: restating the buy must not send it after all.
            change.charges = marked(chargedBack.lineItemId)
            let setAside = chargedBack.versions.filter(\.needsCorrection)
            change.settlesSetAside = setAside.first.map { [($0.externalPurchaseId, chargedBack.lineItemId)] } ?? []
            let settled = setAside.isEmpty ? "" : " (its set-aside REFUND \(chargedBack.lineItemId) settled)"
            change.outcome = "chargeback reversed; no chargeback of \(reversal.amount) was reported to Apple\(settled)"
            return .apply(change)
        }
        change.charges = marked(item.lineItemId)
        // Withdrawn already (an operator's `linkout report retract`): once Apple has accepted that, a second
        // retraction would only say so again; until then, the reversal waits for it as for the chargeback's own.
        if LineItemScreen.standing([item]).first?.common.erroneouslySubmitted == true {
            let accepted = try item.reportRequestIdentifier.flatMap { try ledger.reports.report($0) }?.state
            guard accepted == .accepted else {
                return Self.waitNeverGivenUp(
                    behind: purchase?.externalPurchaseId,
                    "the retraction of the charged-back payment's REFUND is not accepted by Apple yet"
                )
            }
            change.outcome = "chargeback reversed; line item \(item.lineItemId) was retracted already"
            return .apply(change)
        }
        let retraction: String?
        do {
            retraction = try ReportActions(ledger: ledger, clock: Clock(milliseconds: { now })).retraction(
                of: item.lineItemId,
                externalPurchaseId: item.externalPurchaseId
            )
        } catch {
            // Apple's rules forbid the retraction (more than a year after the chargeback, say): the money is
            // recorded back, the REFUND stands at Apple, and a person decides (never an event failing each pass).
            change.outcome = .notReportable(
                "chargeback reversed; not reportable: its REFUND \(item.lineItemId) cannot be retracted (\(error)); "
                    + "the refunded total is lowered, settle the REFUND with Apple yourself"
            )
            return .apply(change)
        }
        guard let retraction else {
            return Self.waitNeverGivenUp(
                behind: purchase?.externalPurchaseId,
                "the charged-back payment's REFUND is not accepted by Apple yet"
            )
        }
        change.outcome = "chargeback reversed; line item \(item.lineItemId) retracted"
        change.restatements = [(item.externalPurchaseId, item.lineItemId, retraction)]
        return .apply(change)
    }

    /// Whether a chargeback not reversed took money of `charge`: what a refund of more than is left waits for.
    /// Told by the chargeback's line item, which a chargeback of a reported purchase has when it took money;
    /// before the purchase is reported, assumed.
    private func chargebackMayHaveTaken(from charge: PurchaseCharge, chargeId: String, of purchase: PurchaseRecord?)
        throws -> Bool
    {
        guard purchase?.isReported == true else { return true }
        let charges = try ledger.payments.charges(purchaseId: charge.purchaseId)
        let reversed = Set(charges.filter(\.isReversal).map(\.lineItemId))
        for candidate in charges {
            guard case .refund(let refundId) = candidate.chargeKey else { continue }
            let lineItemId = LineItemID.chargeback(of: chargeId, dispute: refundId)
            if !reversed.contains(lineItemId), try !ledger.reports.lineItemVersions(lineItemId).isEmpty { return true }
        }
        return false
    }

    /// Money that may wait weeks for what it follows (a reversal for Apple to accept its chargeback's REFUND; a
    /// refund for a chargeback's reversal) waits behind the purchase's token: tried again every hour, and at once
    /// when that comes, never given up. Given up after the three days other events get, a reversal left the
    /// chargeback standing at Apple and in the refunded total for good. A purchase with no token yet waits as any
    /// event does.
    private static func waitNeverGivenUp(behind token: ExternalPurchaseID?, _ reason: String) -> Decision {
        token.map { .holdBehind(token: $0, reason: reason) } ?? .wait(reason)
    }

    /// Stored as a charge of the purchase naming the retracted line item: the same reversal delivered again
    /// changes nothing, and a second chargeback of the same amount is the one a second reversal withdraws.
    static func reversalKey(_ reversalId: String) -> ChargeKey { .reversal(reversalId) }
}
