import Domain
import Payments
import Storage

/// Refunds and chargebacks that are records of their own (Paddle's adjustments): each is made once, however
/// often and in whatever order it is delivered, and adds its amount to what the payment had refunded before.
extension PaymentChangeMapper {
    /// Stored with the change as a charge of the purchase under this key, so the same refund delivered again (an
    /// adjustment created approved and then updated) finds it and changes nothing.
    static func issuedRefundKey(_ refundId: String) -> String { "refund:" + refundId }

    func issuedRefund(_ issued: IssuedRefund, event: (provider: ProviderID, eventId: String), at now: Int64) throws
        -> Decision
    {
        guard let charge = try ledger.payments.charge(key: issued.paymentId) else {
            return .wait("the refunded payment has no purchase yet")
        }
        let marker = Self.issuedRefundKey(issued.refundId)
        guard try ledger.payments.charge(key: marker) == nil else {
            return .apply(PaymentChange(event: event, outcome: "refund \(issued.refundId) already recorded", at: now))
        }
        // Amounts are at most 10^12 (`ProviderJSON`): the sum cannot overflow. Never more than was paid.
        let refunded = min(charge.amountRefunded + issued.amount, charge.amountTotal)
        let cumulative = ChargeRefund(
            chargeId: issued.paymentId,
            paymentIntentId: issued.paymentId,
            amount: charge.amountTotal,
            amountRefunded: refunded,
            currency: issued.currency,
            fullyRefunded: refunded >= charge.amountTotal,
            refundedAt: issued.refundedAt,
            // A chargeback's line item is keyed on it, as a Stripe dispute's is (`AppleLineItems.refund`).
            disputeId: issued.kind == .chargeback ? issued.refundId : nil
        )
        let decision = try refund(cumulative, event: event, at: now)
        guard case .apply(var change) = decision else { return decision }
        change.charges.append(
            PurchaseCharge(
                chargeKey: marker,
                purchaseId: charge.purchaseId,
                lineItemId: charge.lineItemId,
                amountTotal: issued.amount,
                amountTax: issued.tax,
                amountRefunded: 0,
                createdAt: issued.refundedAt
            )
        )
        return .apply(change)
    }

    /// A chargeback given back to the seller. The chargeback's `REFUND` stays with Apple until an operator
    /// withdraws it (`linkout report retract`): a retraction is a restatement of a line item Apple holds, which
    /// the report actions make, not the payment mapper. The outcome names the line item and is logged as an error.
    func chargebackReversed(
        _ reversal: ChargebackReversal,
        event: (provider: ProviderID, eventId: String),
        at now: Int64
    )
        throws -> Decision
    {
        guard let charge = try ledger.payments.charge(key: reversal.paymentId) else {
            return .wait("the charged-back payment has no purchase yet")
        }
        let items = try ledger.reports.purchaseLineItems(containing: charge.lineItemId).filter {
            $0.lineItemId.hasPrefix(reversal.paymentId + ":dispute:") && $0.correction == nil
        }
        guard let item = items.last else {
            return .apply(
                PaymentChange(
                    event: event,
                    outcome: "chargeback reversed; no chargeback was reported to Apple",
                    at: now
                )
            )
        }
        return .apply(
            PaymentChange(
                event: event,
                outcome: "chargeback reversed; not reportable automatically: retract line item \(item.lineItemId) "
                    + "(linkout report retract \(item.externalPurchaseId) \(item.lineItemId))",
                at: now
            )
        )
    }
}
