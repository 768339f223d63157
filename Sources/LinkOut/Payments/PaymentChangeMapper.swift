import Domain
import ExternalPurchase
import Foundation
import Payments
import Storage

/// What one payment fact changes: the purchase and charge to record, the session's new state, and the Apple
/// line items (through `AppleLineItems`, a pure mapping). It reads what earlier events recorded (the buy a
/// renewal or refund refers to) and writes nothing itself.
struct PaymentChangeMapper: Sendable {
    enum Decision: Sendable {
        case apply(PaymentChange)
        /// Not yet: something it depends on has not arrived (the reason says what).
        case wait(String)
        /// Not yet: an earlier line item of the same token is held (for an exchange rate), and Apple gets a
        /// token's line items in the order they happened. Never given up: it goes on once the hold ends.
        case holdBehind(token: ExternalPurchaseID, reason: String)
    }

    let ledger: Ledger
    let catalog: [Product]
    let lineItems: AppleLineItems
    /// Rates for pricing currencies Apple does not report in (`payments.exchangeRates`, `…File`).
    let rates: ExchangeRateSource
    /// Redemption codes and events for the developer's backend.
    let entitlements: EntitlementEvents
    /// Set while making the line items of a held event: it no longer waits behind its own hold.
    var releasing = false

    /// The rate for a sale in `currency` at `date` (UNIX ms): nil when Apple takes the currency as it is, else the rate
    /// of the transaction's 48 hours or why there is none (Apple: "exchangeRate"), which holds the line item.
    func rate(_ currency: CurrencyCode, at date: Int64) -> ExchangeRateTable.Lookup? {
        guard !ReportValidator.reportingCurrencies.contains(currency.uppercased()) else { return nil }
        return rates.rate(for: currency, at: date)
    }

    /// The reason a token's new line items wait, when an earlier one of it is held.
    func heldBehind(_ token: ExternalPurchaseID) throws -> String? {
        guard !releasing, try ledger.payments.hasHeldEvents(externalPurchaseId: token)
        else { return nil }
        return "an earlier line item of this token waits for an exchange rate"
    }

    /// The change for a provider's event, decoded from storage by its provider (`PaymentEventProcessor`).
    /// `tookMoney`: the event and the provider both say live; only then is a purchase a real sale.
    func change(
        for payload: PaymentEvent,
        tookMoney: Bool,
        event key: (provider: ProviderID, eventId: String),
        at now: Int64
    ) throws -> Decision {
        switch payload {
        case .purchaseCompleted(var completion):
            // A completion of a purchase already recorded (the same session delivered again under another event
            // id, Stripe's `async_payment_succeeded` after a paid completion) changes nothing: recorded again, it
            // set a purchase refunded or ended since back to paid, and signed its entitlement anew. A sale held for
            // its exchange rate is mapped again on purpose when the rate comes (`releasing`): its line item is made
            // then.
            if !releasing, try ledger.payments.purchase(id: completion.sessionId) != nil {
                return .apply(PaymentChange(event: key, outcome: "purchase already recorded", at: now))
            }
            // Only checkouts linkout started are its purchases (a Stripe account may serve other products too).
            let session = try ledger.payments.paymentSession(id: completion.sessionId)
            let checkout = try completion.checkoutId.flatMap { try ledger.tokens.checkout(id: $0) }
            guard session != nil || checkout != nil else {
                // linkout's metadata beside an id of its checkouts' shape: another product's session is ignored.
                guard let named = completion.checkoutId, Identifiers.isCheckoutId(named.rawValue),
                    completion.externalPurchaseId != nil || completion.productId != nil
                else {
                    return .apply(PaymentChange(event: key, outcome: "ignored: not a linkout checkout", at: now))
                }
                // Named as linkout names its checkouts, yet unknown here: most likely a ledger restored from a
                // backup older than the landing, whose visit went with the days after the backup. Nothing can be
                // rebuilt without the token's landing, so it is said loudly, never dropped as another product's.
                return .apply(
                    PaymentChange(
                        event: key,
                        outcome: .notReported(
                            "a payment of checkout \(named), which this ledger does not know (restored from a backup "
                                + "older than its landing?): not recorded; the token Apple may hold its LINE_ITEM on "
                                + "is \(completion.externalPurchaseId?.rawValue ?? "not named")"
                        ),
                        at: now
                    )
                )
            }
            if let session {
                // What linkout started is the truth; the event's metadata only names it. A token, product or mode
                // claimed by the event cannot move the sale to another token or product.
                completion.externalPurchaseId = session.externalPurchaseId
                completion.checkoutId = session.checkoutId
                completion.productId = session.productId
                if let product = catalog.first(where: { $0.id == session.productId.rawValue }) {
                    completion.mode = product.interval == nil ? .payment : .subscription
                }
                // A delayed payment clears days after the person completed the checkout, and Apple's `creationDate` is
                // when the person authorized the purchase (Apple: "creationDate"): the completion linkout recorded,
                // when the session turned pending, not the day the money arrived. Delivered out of order (the clearing
                // before the completion), the person authorized it after linkout started the session: that is the
                // nearer date, within the session's life rather than days later.
                if completion.clearedLater {
                    let authorized = session.state == .pending ? session.updatedAt : session.createdAt
                    completion.completedAt = min(completion.completedAt, authorized)
                }
            } else if let checkout {
                // A session linkout did not start on a checkout it did (a payment link made by hand, a session from
                // before a restore): the checkout says whose sale it is, never the event's metadata.
                completion.externalPurchaseId = checkout.externalPurchaseId
            }
            return .apply(try purchase(completion, provider: key.provider, tookMoney: tookMoney, event: key, at: now))
        case .purchasePending(let reference):
            return .apply(session(reference.sessionId, .pending, event: key, outcome: "payment pending", at: now))
        case .purchaseFailed(let reference):
            return .apply(session(reference.sessionId, .failed, event: key, outcome: "payment failed", at: now))
        case .sessionExpired(let reference):
            return .apply(session(reference.sessionId, .expired, event: key, outcome: "session expired", at: now))
        case .firstInvoicePaid(let invoice):
            return try firstInvoice(invoice, event: key, at: now)
        case .renewalPaid(let invoice):
            return try renewal(invoice, event: key, at: now)
        case .subscriptionChanged(let invoice):
            return try renewal(invoice, event: key, at: now, planChange: true)
        case .refunded(let refund):
            return try refunded(refund, event: key, at: now)
        case .chargebackReversed(let reversal):
            return try chargebackReversed(reversal, event: key, at: now)
        case .invoicePaymentLinked(let invoiceId, let paymentIntentId, let amountPaid):
            guard var charge = try ledger.payments.charge(key: .invoice(invoiceId)) else {
                return .wait("invoice \(invoiceId) has no recorded payment yet")
            }
            charge.chargeKey = .payment(paymentIntentId)
            // The payment is what it charged, as when the provider names it with the invoice (`charges(of:)`); the
            // invoice's row keeps the period's price.
            if let paid = amountPaid, (0..<charge.amountTotal).contains(paid) {
                charge.amountTax = TaxShare.of(charge.amountTax, in: charge.amountTotal, part: paid)
                charge.amountTotal = paid
            }
            return .apply(
                PaymentChange(event: key, outcome: "payment linked to its invoice", charges: [charge], at: now)
            )
        case .subscriptionEnded(let end):
            guard var purchase = try ledger.payments.purchase(subscriptionId: end.subscriptionId) else {
                return .wait("subscription \(PaymentStore.noPurchaseYet(end.subscriptionId))")
            }
            let asRead = purchase
            purchase.status = .ended
            purchase.updatedAt = now
            var change = PaymentChange(
                event: key,
                outcome: "subscription ended",
                purchase: purchase,
                webhooks: try entitlements.event(
                    .subscriptionEnded,
                    purchase: purchase,
                    cause: end.subscriptionId,
                    at: now
                ),
                at: now
            )
            change.purchaseAsRead = asRead
            return .apply(change)
        case .ignored(let type):
            return .apply(PaymentChange(event: key, outcome: "ignored (\(type))", at: now))
        case .notReported(let type, let reason):
            return .apply(
                PaymentChange(event: key, outcome: .notReported("not reported to Apple: \(type): \(reason)"), at: now)
            )
        }
    }

    /// A paid checkout: the purchase, its first charge, the session complete, and the buy as an Apple line item
    /// when the visit carried a token (a tokenless visit has nothing to report to Apple).
    /// `tookMoney`: a live payment; which payments Apple is told of is `ReportingPolicy.isSaleForApple`.
    func purchase(
        _ completion: PurchaseCompletion,
        provider: ProviderID,
        tookMoney: Bool,
        event: (provider: ProviderID, eventId: String)?,
        at now: Int64
    ) throws -> PaymentChange {
        let product = catalog.first { $0.id == completion.productId?.rawValue }
        var record = PurchaseRecord(
            purchaseId: completion.sessionId,
            provider: provider,
            checkoutId: completion.checkoutId,
            externalPurchaseId: completion.externalPurchaseId,
            bundleId: completion.bundleId,
            productId: completion.productId,
            kind: completion.mode == .subscription ? .subscription : .oneTime,
            status: .paid,
            currency: completion.currency.uppercased(),
            amountTotal: completion.amountTotal,
            amountTax: completion.amountTax,
            taxCountry: TaxCountry(
                completion.customerCountry.flatMap(CountryCodes.alpha3(forAlpha2:)) ?? lineItems.fallbackTaxCountry
            ),
            subscriptionId: completion.subscriptionId,
            buyLineItemId: nil,
            periodEnd: nil,
            paidDays: 0,
            createdAt: completion.completedAt,
            updatedAt: now,
            live: tookMoney
        )
        var change = PaymentChange(
            event: event,
            outcome: "purchase recorded",
            sessionState: (completion.sessionId, .complete),
            at: now
        )
        let reported =
            completion.externalPurchaseId.map {
                ReportingPolicy.isSaleForApple(live: tookMoney, environment: $0.environment)
            } ?? false
        try addBuy(completion, product: product, reported: reported, to: &record, &change)
        change.purchase = record
        change.redemption = entitlements.redemption(for: record, at: now)
        change.webhooks = try entitlements.event(
            .purchaseCompleted,
            purchase: record,
            cause: record.purchaseId,
            at: now
        )
        return change
    }

    /// The buy's Apple line item on `change`, or its hold while the sale's exchange rate is missing; `reported`:
    /// whether this sale goes to Apple at all (a live payment, or any payment on a sandbox token).
    private func addBuy(
        _ completion: PurchaseCompletion,
        product: Product?,
        reported: Bool,
        to record: inout PurchaseRecord,
        _ change: inout PaymentChange
    ) throws {
        let lookup = rate(completion.currency, at: completion.completedAt)
        if case .missing(let reason) = lookup, reported, let token = completion.externalPurchaseId {
            // Held until a rate for the sale's date arrives. The buy's id is its session (`AppleLineItems`), so
            // renewals and refunds can refer to it now; they wait behind it.
            record.buyLineItemId = LineItemID(completion.sessionId)
            if completion.mode == .subscription { record.periodEnd = firstPeriod(completion, product).end }
            change.charges = buyCharges(completion, lineItemId: LineItemID(completion.sessionId))
            change.hold = (token, reason)
            change.outcome = "purchase recorded; line item \(completion.sessionId) held: \(reason)"
        } else {
            var exchangeRate: ExchangeRate?
            if case .rate(let found) = lookup { exchangeRate = found }
            do {
                let item: LineItem
                if completion.mode == .subscription {
                    let period = firstPeriod(completion, product)
                    item = .subscriptionBuy(
                        try lineItems.subscriptionStart(completion, period: period, exchangeRate: exchangeRate)
                    )
                    record.periodEnd = period.end
                } else {
                    item = .oneTimeBuy(try lineItems.oneTimeBuy(completion, exchangeRate: exchangeRate))
                }
                record.buyLineItemId = item.common.lineItemId
                change.charges = buyCharges(completion, lineItemId: item.common.lineItemId)
                if completion.externalPurchaseId != nil, !reported {
                    // No buy on record for Apple: renewals and refunds of it are not reported either.
                    record.buyLineItemId = nil
                    change.charges = buyCharges(completion, lineItemId: record.buyChargeLineItemId)
                    change.outcome = "test payment on a production token: recorded, not reported to Apple"
                } else if let token = completion.externalPurchaseId {
                    change.outcome = "purchase recorded; line item \(item.common.lineItemId) queued for Apple"
                    // On the checkout's token, unless Apple was told that token carries no sales (DUPLICATE_TOKEN).
                    try place(
                        (item.common.lineItemId, item.common.creationDate, try Self.encode(item)),
                        what: "purchase",
                        purchaseToken: token,
                        chain: [],
                        in: &change
                    )
                } else {
                    change.outcome = "purchase recorded; no token, nothing to report to Apple"
                }
            } catch let error as AppleLineItemError {
                // Not at Apple, but paid: its refunds still end it.
                change.charges = buyCharges(completion, lineItemId: record.buyChargeLineItemId)
                change.outcome = .notReportable("purchase recorded; not reportable: \(error)")
            }
        }
    }

    /// A subscription's first period: Stripe's session names none; the catalog's interval from the moment of
    /// payment does.
    private func firstPeriod(_ completion: PurchaseCompletion, _ product: Product?) -> SubscriptionPeriod {
        completion.period
            ?? SubscriptionPeriod(start: completion.completedAt, interval: product?.interval ?? BillingInterval(.month))
    }

    /// A buy's payment under every name a later refund may use. A subscription's first payment is known by its
    /// invoice until `invoice_payment.paid` names it.
    private func buyCharges(_ completion: PurchaseCompletion, lineItemId: LineItemID) -> [PurchaseCharge] {
        let keys =
            [ChargeKey.payment(completion.paymentIntentId ?? completion.sessionId)]
            + (completion.invoiceId.map { [.invoice($0)] } ?? [])
        return keys.map { key in
            PurchaseCharge(
                chargeKey: key,
                purchaseId: completion.sessionId,
                lineItemId: lineItemId,
                amountTotal: completion.amountTotal,
                amountTax: completion.amountTax,
                amountRefunded: 0,
                createdAt: completion.completedAt
            )
        }
    }

    private func session(
        _ sessionId: String,
        _ state: PaymentSessionState,
        event: (provider: ProviderID, eventId: String),
        outcome: PaymentOutcome,
        at now: Int64
    ) -> PaymentChange {
        PaymentChange(event: event, outcome: outcome, sessionState: (sessionId, state), at: now)
    }

    /// Not reported (the session's completion was the start), but its payment can be refunded later: the
    /// charge is linked to the start's line item.
    private func firstInvoice(_ invoice: InvoicePayment, event: (provider: ProviderID, eventId: String), at now: Int64)
        throws -> Decision
    {
        guard let subscription = invoice.subscriptionId,
            let purchase = try ledger.payments.purchase(subscriptionId: subscription)
        else {
            return .wait(
                "the first invoice's subscription \(PaymentStore.noPurchaseYet(invoice.subscriptionId ?? "(none named)"))"
            )
        }
        var change = PaymentChange(event: event, outcome: "first invoice linked to the start", at: now)
        change.charges = Self.charges(
            of: invoice,
            purchaseId: purchase.purchaseId,
            lineItemId: purchase.buyChargeLineItemId
        )
        return .apply(change)
    }

    static func encode(_ item: LineItem) throws -> String {
        try AppleJSON.text(item)
    }
}
