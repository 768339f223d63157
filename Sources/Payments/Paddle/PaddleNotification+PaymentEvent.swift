import Domain

/// What a Paddle notification means for linkout, in the provider-neutral `PaymentEvent` the Stripe provider
/// produces too. All of Paddle's meaning lives here, so a change of `PaymentEvent` is a change of this file.
///
/// - `transaction.completed` (Paddle fulfils on it; Paddle changelog on `transaction.paid`): by `origin`, a renewal
///   (`subscription_recurring`, Apple's `RENEWAL`, paid period from `billing_period`), a plan change
///   (`subscription_update`, `SUBSCRIPTION_CHANGE`; prorated, possibly negative amounts; without `billing_period` it
///   runs from its payment to the end of the subscription's current period), else a buy: a subscription start when it
///   has a `subscription_id`, a one-time buy otherwise. Tax-inclusive is `grand_total`, tax `grand_total_tax` (our
///   mapping of Paddle's transaction totals, docs/provider-facts.md). Only a transaction linkout created (`origin`
///   `api`, or `web`) is a buy: Paddle copies `custom_data` onto every later transaction of a subscription, so a
///   one-off charge (`subscription_charge`) or a card update (`subscription_payment_method_change`) would otherwise
///   look like a second purchase of the same checkout. A one-off charge is money linkout does not report: the event's
///   outcome and a warning say why (README, "What linkout reports").
/// - `transaction.payment_failed`: an attempt failed, and the transaction stays payable (the person may try another
///   card in the same checkout), so the session is pending, not finished; `transaction.canceled`: it will never be
///   paid.
/// - `adjustment.created` / `.updated`: a refund counts once Paddle `approved` it (most live refunds wait for Paddle's
///   approval; the approved amounts are the adjustment's totals). A chargeback is final when Paddle makes it (Paddle
///   does not document a chargeback's status values, so this is not confirmed: only `pending_approval`, `rejected` and
///   `reversed` are taken to mean "not yet" or "no"); a `chargeback_reverse` withdraws it. Credits, warnings and their
///   reversals move no money back to the customer and are ignored.
/// - `subscription.canceled`: the subscription ended. `subscription.updated` (when a destination sends it) is
///   acknowledged and says why a plan change with no transaction is not reported.
extension PaddleNotification {
    public var paymentEvent: PaymentEvent {
        switch entity {
        case .transaction(let transaction): transactionEvent(transaction)
        case .adjustment(let adjustment): adjustmentEvent(adjustment)
        case .subscriptionCanceled(let end):
            .subscriptionEnded(
                PaymentEvent.SubscriptionEnd(
                    subscriptionId: end.subscriptionId,
                    endedAt: end.canceledAt ?? occurredAt,
                    externalPurchaseId: end.customData.externalPurchaseId.map(ExternalPurchaseID.init)
                )
            )
        case .other where eventType == "subscription.updated":
            // Paddle's `subscription.updated` is the subscription as it is now, not what changed (Stripe's
            // `previous_attributes` has no Paddle counterpart), and comes for every new period, scheduled
            // cancellation, pause or card change too; a plan change billed now comes with its own
            // `subscription_update` transaction. So one billed later or not at all cannot be told apart.
            .ignored(
                type: "subscription.updated: a plan change Paddle bills later or not at all is not reported "
                    + "(README, Payments)"
            )
        case .other: .ignored(type: eventType)
        }
    }

    private func transactionEvent(_ transaction: PaddleTransaction) -> PaymentEvent {
        let reference = PaymentEvent.SessionReference(
            sessionId: transaction.id,
            checkoutId: transaction.customData.checkoutId.map(CheckoutID.init)
        )
        switch eventType {
        case "transaction.payment_failed": return .purchasePending(reference)
        case "transaction.canceled": return .sessionExpired(reference)
        case "transaction.completed": break
        default: return .ignored(type: eventType)
        }
        switch transaction.origin {
        case "subscription_recurring":
            guard let payment = invoicePayment(transaction, reason: "subscription_cycle") else {
                return .ignored(type: eventType + " without billing_period")
            }
            return .renewalPaid(payment)
        case "subscription_update":
            // Without `billing_period` the change runs from its payment to the end of the subscription's current
            // period (the mapper knows it): Apple wants a plan change reported, with or without a payment.
            return .subscriptionChanged(
                invoicePayment(transaction, reason: "subscription_update")
                    ?? invoicePayment(
                        transaction,
                        reason: "subscription_update",
                        period: SubscriptionPeriod(start: occurredAt, end: occurredAt)
                    ).runningToCurrentEnd
            )
        case nil, "api", "web":
            return .purchaseCompleted(completion(transaction))
        case "subscription_charge":
            return .notReported(
                type: eventType + " (origin subscription_charge)",
                reason: "a one-off charge on a subscription is for something the seller added (Paddle copies the "
                    + "subscription's custom_data onto it, so the product named is not what was charged for): it is "
                    + "neither a renewal nor a plan change, and whether Apple's SUBSCRIPTION_PAYMENT is meant for "
                    + "it is not confirmed (Apple's documentation lists the value, not its meaning); report it "
                    + "to Apple yourself"
            )
        case let origin?:
            return .ignored(type: "\(eventType) (origin \(origin))")
        }
    }

    /// A buy: the transaction linkout created for a checkout.
    func completion(_ transaction: PaddleTransaction) -> PurchaseCompletion {
        let subscription = transaction.subscriptionId != nil
        return PurchaseCompletion(
            sessionId: transaction.id,
            checkoutId: transaction.customData.checkoutId.map(CheckoutID.init),
            externalPurchaseId: transaction.customData.externalPurchaseId.map(ExternalPurchaseID.init),
            bundleId: transaction.customData.bundleId.map(BundleID.init),
            productId: transaction.customData.productId.map(ProductID.init),
            mode: subscription ? .subscription : .payment,
            currency: CurrencyCode(transaction.currency),
            amountSubtotal: transaction.subtotal,
            amountTax: transaction.grandTotalTax,
            amountTotal: transaction.grandTotal,
            customerCountry: transaction.countryCode,
            // Refunds and chargebacks name the transaction: its charge is recorded under the transaction id.
            paymentIntentId: transaction.id,
            subscriptionId: transaction.subscriptionId,
            completedAt: occurredAt,
            period: subscription ? transaction.billingPeriod : nil
        )
    }

    /// A later transaction of a subscription: a renewal or a plan change.
    func invoicePayment(_ transaction: PaddleTransaction, reason: String) -> InvoicePayment? {
        transaction.billingPeriod.map { invoicePayment(transaction, reason: reason, period: $0) }
    }

    private func invoicePayment(_ transaction: PaddleTransaction, reason: String, period: SubscriptionPeriod)
        -> InvoicePayment
    {
        var payment = InvoicePayment(
            invoiceId: transaction.id,
            subscriptionId: transaction.subscriptionId,
            billingReason: reason,
            externalPurchaseId: transaction.customData.externalPurchaseId.map(ExternalPurchaseID.init),
            bundleId: transaction.customData.bundleId.map(BundleID.init),
            productId: transaction.customData.productId.map(ProductID.init),
            currency: CurrencyCode(transaction.currency),
            // The period's price before credits, and what was charged after them (`InvoicePayment.charged`):
            // a period paid from a downgrade's credit is paid service though it charges less, or nothing.
            totalExcludingTax: transaction.total - transaction.tax,
            tax: transaction.tax,
            total: transaction.total,
            amountPaid: max(transaction.grandTotal, 0),
            period: period,
            customerCountry: transaction.countryCode,
            paymentIntentId: transaction.id,
            paidAt: occurredAt
        )
        // Paddle states the tax of what it charged; a share worked out from the total's can be a unit off.
        payment.statedChargedTax = transaction.grandTotalTax
        return payment
    }

    /// A chargeback's status values are not documented by Paddle (not confirmed): one not waiting, refused or itself
    /// reversed is taken as made.
    static func isFinal(_ status: String) -> Bool {
        !["pending_approval", "rejected", "reversed"].contains(status)
    }

    private func adjustmentEvent(_ adjustment: PaddleAdjustment) -> PaymentEvent {
        let kind: Refund.Kind
        switch (adjustment.action, adjustment.status) {
        case ("refund", "approved"): kind = .refund
        case ("chargeback", let status) where Self.isFinal(status): kind = .chargeback
        case ("chargeback_reverse", let status) where Self.isFinal(status):
            return .chargebackReversed(
                ChargebackReversal(
                    reversalId: adjustment.id,
                    paymentId: adjustment.transactionId,
                    amount: adjustment.total,
                    currency: CurrencyCode(adjustment.currency),
                    reversedAt: occurredAt
                )
            )
        default: return .ignored(type: "\(eventType) (\(adjustment.action), \(adjustment.status))")
        }
        return .refunded(
            Refund(
                id: adjustment.id,
                kind: kind,
                amount: .this(adjustment.total, tax: min(adjustment.tax, adjustment.total)),
                paymentId: adjustment.transactionId,
                currency: CurrencyCode(adjustment.currency),
                refundedAt: occurredAt
            )
        )
    }
}
