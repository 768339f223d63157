import Domain
public import ExternalPurchase
import Foundation
public import Payments

/// Payment facts → Apple's line items (Apple: "Reporting tokens with transactions", "Line item fields"), as a pure
/// mapping: no I/O, no clock, the same input always gives the same item. The caller stores what it reported and passes
/// back what a later item depends on (the subscription's previous item, the refunded buy, what was refunded before).
///
/// Amounts: a provider's totals in minor units become milli-units (`MinorUnits.milliUnits`):
/// `amountTaxInclusive` = the total paid, `taxAmount` = the tax in it, `amountTaxExclusive` = their
/// difference, so inclusive = exclusive + tax holds by construction (`IncorrectAmountTaxInclusiveError`). A new
/// buy's `netAmountTaxExclusive` is its `amountTaxExclusive` (nothing refunded yet; Apple's example "buy 1000,
/// refund 300 → 700"); a refund's is the buy's exclusive amount less every refund so far, this one included.
///
/// Currencies: `pricingCurrency` is the charged currency. When Apple accepts it as a reporting currency, it is also the
/// `reportingCurrency` and no `exchangeRate` is sent, as Apple's "reportingCurrency" demands. Otherwise Apple requires
/// EUR or USD with the Bloomberg rate of the transaction's 48 hours; linkout cannot know that rate, so the caller
/// passes an `ExchangeRate` (decimal text, written to Apple as a plain decimal), and without one the mapping throws
/// `exchangeRateRequired` rather than report a made-up figure (the item can wait in the caller's queue for an
/// operator-supplied rate).
///
/// Line item ids are the Stripe object that caused the item, so a webhook delivered three times makes one
/// line item (Apple: unique per app, reuse only to restate): a buy is its Checkout Session id (`cs_…`), a
/// renewal its invoice id (`in_…`), a refund `<charge id>:refund:<cumulative amount_refunded>`, which differs
/// for each partial refund and repeats for a redelivery of the same one (a refund that is a record of its own,
/// a Paddle adjustment, `<payment id>:refund:<its id>`), a chargeback `<charge id>:dispute:<its id>`.
public struct AppleLineItems: Sendable {
    /// Apple's `taxCountry` when the payment has no billing country (alpha-3, e.g. `DEU`).
    public var fallbackTaxCountry: String

    public init(fallbackTaxCountry: String) {
        self.fallbackTaxCountry = fallbackTaxCountry.uppercased()
    }

    /// A one-time purchase: `ONE_TIME_BUY`, quantity 1 (the amounts are the line's total).
    public func oneTimeBuy(_ purchase: PurchaseCompletion, exchangeRate: ExchangeRate? = nil)
        throws(AppleLineItemError) -> OneTimeBuyLineItem
    {
        guard let product = purchase.productId, !product.isEmpty else { throw .missingProduct }
        var fields = try buyFields(
            id: purchase.sessionId,
            at: purchase.completedAt,
            currency: purchase.currency,
            total: purchase.amountTotal,
            tax: purchase.amountTax,
            country: purchase.customerCountry,
            exchangeRate: exchangeRate
        )
        fields["productType"] = "ONE_TIME_BUY"
        fields["productIdentifier"] = product
        var item: OneTimeBuyLineItem = try Self.build(fields)
        item.exchangeRate = Self.reportedRate(currency: purchase.currency, exchangeRate)
        return item
    }

    /// The start of a subscription (`SUBSCRIPTION_START`): 0 days of paid service so far, and the first
    /// period (`period`, else the purchase's own).
    public func subscriptionStart(
        _ purchase: PurchaseCompletion,
        period: SubscriptionPeriod? = nil,
        exchangeRate: ExchangeRate? = nil
    ) throws(AppleLineItemError) -> SubscriptionBuyLineItem {
        guard let product = purchase.productId, !product.isEmpty else { throw .missingProduct }
        guard let period = period ?? purchase.period else { throw .missingPeriod }
        var fields = try buyFields(
            id: purchase.sessionId,
            at: purchase.completedAt,
            currency: purchase.currency,
            total: purchase.amountTotal,
            tax: purchase.amountTax,
            country: purchase.customerCountry,
            exchangeRate: exchangeRate
        )
        fields["productType"] = "SUBSCRIPTION"
        fields["productIdentifier"] = product
        fields["subscriptionEvent"] = "SUBSCRIPTION_START"
        fields["subscriptionStartDate"] = period.start
        fields["subscriptionEndDate"] = period.end
        fields["subscriptionDaysOfPaidService"] = 0
        var item: SubscriptionBuyLineItem = try Self.build(fields)
        item.exchangeRate = Self.reportedRate(currency: purchase.currency, exchangeRate)
        return item
    }

    /// A renewal (`RENEWAL`) referencing the start. `previous` is the subscription's latest reported item (the start or
    /// the last renewal): its period is added to the days of paid service when it was paid service (`previousPaid`,
    /// which the caller knows from the subscription's history; without it, when `previous` charged something). The days
    /// count paid days only, so a free first period adds nothing (Apple: "subscriptionDaysOfPaidService"), but a period
    /// paid from the customer's credit balance (a downgrade's, charged 0) does. The amounts are what the person was
    /// charged (`InvoicePayment.charged`), tax in proportion.
    /// `startedAt`: the `creationDate` of the start it references, when known (else `previous`'s, if it is the
    /// start): it is never dated before it.
    public func renewal(
        _ invoice: InvoicePayment,
        previous: SubscriptionBuyLineItem,
        previousPaid: Bool? = nil,
        exchangeRate: ExchangeRate? = nil,
        startedAt: Int64? = nil
    ) throws(AppleLineItemError) -> SubscriptionBuyLineItem {
        try following(
            previous,
            with: invoice,
            event: .renewal,
            previousPaid: previousPaid,
            exchangeRate: exchangeRate,
            startedAt: startedAt
        )
    }

    /// Apple's `subscriptionDaysOfPaidService` of the item that follows `previous` in its subscription, its period
    /// starting at `next.start`: `previous`'s days, and its period's when that period was paid service (`paid`).
    /// A plan change used the period only up to the change. A renewal follows all of it (where linkout's own
    /// estimate of a Stripe start's period ends is no measure), unless it starts within a day of `previous`'s
    /// start (within half of `previous`'s period, when that is shorter than two days): the same period paid again
    /// (a re-bill, a dunning retry's new transaction), which counted twice. A daily plan's first renewal starts a
    /// few seconds short of a day after linkout's estimate of the start (Stripe anchors the period before the
    /// checkout's event is created): a renewal all the same.
    static func paidDays(after previous: SubscriptionBuyLineItem, paid: Bool, next: (start: Int64, isChange: Bool))
        -> Int32
    {
        var used = SubscriptionPeriod(start: previous.subscriptionStartDate, end: previous.subscriptionEndDate)
        let sameAsPrevious = min(Milliseconds.day, Int64.saturating(used.end, minus: used.start) / 2)
        if next.isChange {
            used.end = min(max(next.start, used.start), used.end)
        } else if Int64.saturating(next.start, minus: used.start) < sameAsPrevious {
            used.end = used.start
        }
        // Clamped rather than trapping: a stored item's days and a period's come from outside.
        return Int32(clamping: Int64(previous.subscriptionDaysOfPaidService) + Int64(paid ? used.days : 0))
    }

    /// A plan change or proration (`SUBSCRIPTION_CHANGE`, Apple: "SubscriptionBuyLineItem") referencing the start. The
    /// paid days carry on across the change: those of `previous` up to the change (its period, cut at the change's
    /// start) are added when `previous` was paid service (`previousPaid`, as for `renewal`). The change reports what
    /// the customer was charged for it (`InvoicePayment.charged`, tax in proportion): a downgrade's invoice can total
    /// below zero (the unused time is credited to the customer's balance and lowers a later invoice, which then reports
    /// what was really charged), so it reports 0, as Apple asks for subscription events "even if they don't include a
    /// payment" (Apple: "Reporting tokens with transactions").
    public func subscriptionChange(
        _ invoice: InvoicePayment,
        previous: SubscriptionBuyLineItem,
        previousPaid: Bool? = nil,
        exchangeRate: ExchangeRate? = nil,
        startedAt: Int64? = nil
    ) throws(AppleLineItemError) -> SubscriptionBuyLineItem {
        try following(
            previous,
            with: invoice,
            event: .change,
            previousPaid: previousPaid,
            exchangeRate: exchangeRate,
            startedAt: startedAt
        )
    }

    /// What follows an item in its subscription: Apple's `subscriptionEvent`.
    private enum Following: String {
        case renewal = "RENEWAL"
        case change = "SUBSCRIPTION_CHANGE"
    }

    /// The item `invoice` pays after `previous` in its subscription, referencing the subscription's start. A
    /// change's total below zero (a downgrade's credit) is reported as 0.
    private func following(
        _ previous: SubscriptionBuyLineItem,
        with invoice: InvoicePayment,
        event: Following,
        previousPaid: Bool?,
        exchangeRate: ExchangeRate?,
        startedAt: Int64?
    ) throws(AppleLineItemError) -> SubscriptionBuyLineItem {
        let isChange = event == .change
        let notBefore =
            startedAt ?? (previous.subscriptionEvent == "SUBSCRIPTION_START" ? previous.creationDate : nil)
        let product = invoice.productId ?? ProductID(previous.productIdentifier)
        guard !product.isEmpty else { throw .missingProduct }
        let paidDays = Self.paidDays(
            after: previous,
            paid: previousPaid ?? (previous.amountTaxInclusive > 0),
            next: (invoice.period.start, isChange: isChange)
        )
        let start =
            previous.subscriptionEvent == "SUBSCRIPTION_START"
            ? previous.lineItemId : previous.referenceLineItemId ?? previous.lineItemId
        let total = isChange ? max(invoice.total, 0) : invoice.total
        var fields = try buyFields(
            id: invoice.invoiceId,
            // Never before the start it refers to (Apple: `ReferencedCreationDateIncompatibleError`), as a refund
            // is never dated before its buy. Only the start bounds it: renewals may arrive out of order.
            at: notBefore.map { max(invoice.paidAt, $0) } ?? invoice.paidAt,
            currency: invoice.currency,
            total: total,
            // A proration's tax is signed and may exceed its total (a plan with another tax treatment): within 0
            // and the total, as a change reports what was charged.
            tax: isChange ? min(max(invoice.tax, 0), total) : invoice.tax,
            charged: invoice.charged,
            chargedTax: invoice.statedChargedTax,
            country: invoice.customerCountry ?? CountryCodes.alpha2(forAlpha3: previous.taxCountry.rawValue),
            exchangeRate: exchangeRate
        )
        fields["productType"] = "SUBSCRIPTION"
        fields["productIdentifier"] = product
        fields["subscriptionEvent"] = event.rawValue
        fields["subscriptionStartDate"] = invoice.period.start
        fields["subscriptionEndDate"] = invoice.period.end
        fields["subscriptionDaysOfPaidService"] = paidDays
        fields["referenceLineItemId"] = start
        var item: SubscriptionBuyLineItem = try Self.build(fields)
        item.exchangeRate = Self.reportedRate(currency: invoice.currency, exchangeRate)
        return item
    }

    /// The refund of what is new in `refund`: `amount_refunded` is cumulative, `alreadyRefunded` is the part of it
    /// reported before (Stripe minor units). Nil when nothing is new (a redelivered or out-of-order event). Currencies,
    /// exchange rate and tax country are the buy's, as Apple requires them to match (Apple's
    /// `PricingCurrencyMismatchError` and the other mismatch errors). The tax is the provider's own figure where it
    /// states one (`ChargeRefund.statedTax`, Paddle's adjustment `totals.tax`), never more than the buy's tax or the
    /// refund; else it is split in proportion to the buy's, rounded on the cumulative amounts so that the refunds of a
    /// buy always add up to exactly its amounts. Either way inclusive = exclusive + tax on each.
    /// `held`: what the buy's standing refunds at Apple add up to (`PurchaseNet.refunds`), when known; a stated
    /// tax is then held to what is left of the buy's tax and tax-exclusive amount after them.
    func refund(
        _ refund: ChargeRefund,
        of buy: LineItem,
        alreadyRefunded: Int64,
        held: (inclusive: Int64, tax: Int64)? = nil
    ) throws(AppleLineItemError) -> RefundLineItem? {
        guard buy.isBuy else { throw .notABuy(buy.common.lineItemId.rawValue) }
        let original = buy.common
        guard refund.currency == original.pricingCurrency else {
            throw .currencyMismatch(buy: original.pricingCurrency.rawValue, refund: refund.currency.rawValue)
        }
        guard refund.amountRefunded >= 0, alreadyRefunded >= 0 else {
            throw .inconsistentAmounts("negative refund amounts")
        }
        guard refund.amountRefunded > alreadyRefunded else { return nil }
        // The buy's own conversion, so a full refund converts to exactly the buy's amount.
        let conversion: (numerator: Int64, denominator: Int64)
        if let rate = original.exchangeRate {
            guard
                let fraction = ExchangeRate(reportingCurrency: original.reportingCurrency.rawValue, rate: rate.text)
                    .fraction
            else { throw .invalidExchangeRate(rate.text) }
            conversion = fraction
        } else {
            conversion = (1, 1)
        }
        func reported(_ minor: Int64) -> Int64 {
            let milli = MinorUnits.milliUnits(minor, currency: refund.currency.rawValue)
            return min(
                Self.mulDivRounded(milli, conversion.numerator, conversion.denominator),
                original.amountTaxInclusive
            )
        }
        func taxShare(_ inclusive: Int64) -> Int64 {
            guard original.amountTaxInclusive > 0 else { return 0 }
            return Self.mulDivRounded(inclusive, original.taxAmount, original.amountTaxInclusive)
        }
        let before = reported(alreadyRefunded)
        let after = reported(refund.amountRefunded)
        guard after > before else { return nil }
        let inclusive = after - before
        var tax = taxShare(after) - taxShare(before)
        var exclusiveRefundedSoFar = after - taxShare(after)
        if let stated = refund.statedTax {
            // What stands before this refund: Apple's, else the provider's own figures for the refunds so far.
            let standing =
                held ?? (inclusive: before, tax: min(reported(max(stated.before, 0)), original.taxAmount, before))
            let taxLeft = max(0, original.taxAmount - standing.tax)
            let exclusiveLeft = max(0, original.amountTaxExclusive - (standing.inclusive - standing.tax))
            // This refund's own stated tax, never more than the buy's tax left or the refund; and the tax takes up
            // at least what would refund more tax-exclusive than the buy has left (stated taxes rounded their own
            // way; a refund that completes the buy takes exactly the rest of its tax).
            let own = max(0, reported(max(stated.after, 0)) - reported(max(stated.before, 0)))
            tax = min(max(min(own, taxLeft), inclusive - exclusiveLeft), taxLeft, inclusive)
            exclusiveRefundedSoFar = standing.inclusive - standing.tax + inclusive - tax
        }
        let fields: [String: Any] = [
            "lineItemId": refund.disputeId.map { "\(refund.chargeId):dispute:\($0)" }
                ?? "\(refund.chargeId):refund:\(refund.refundId ?? String(refund.amountRefunded))",
            // Never before the buy (Apple: `ReferencedCreationDateIncompatibleError`): the provider's clock and the
            // one that dated the buy can differ by moments, and a refund made at once could come out earlier.
            "creationDate": max(refund.refundedAt, original.creationDate),
            "eventType": "REFUND",
            "amountTaxInclusive": inclusive,
            "amountTaxExclusive": inclusive - tax,
            "taxAmount": tax,
            "netAmountTaxExclusive": original.amountTaxExclusive - exclusiveRefundedSoFar,
            "reportingCurrency": original.reportingCurrency,
            "pricingCurrency": original.pricingCurrency,
            "taxCountry": original.taxCountry,
            "referenceLineItemId": original.lineItemId,
        ]
        var item: RefundLineItem = try Self.build(fields)
        item.exchangeRate = original.exchangeRate
        return item
    }

    /// The fields every buy shares: id, date, currencies, amounts and tax country. `charged`: what the person
    /// paid of `total` when the provider's credit balance paid the rest; the tax is then `chargedTax` when the
    /// provider states it, else the same share of `tax`.
    private func buyFields(
        id: String,
        at creationDate: Int64,
        currency: CurrencyCode,
        total: Int64,
        tax: Int64,
        charged: Int64? = nil,
        chargedTax: Int64? = nil,
        country: String?,
        exchangeRate: ExchangeRate?
    ) throws(AppleLineItemError) -> [String: Any] {
        guard total >= 0, tax >= 0, tax <= total, (charged ?? total) >= 0, (charged ?? total) <= total else {
            throw .inconsistentAmounts("total \(total), tax \(tax), charged \(charged ?? total)")
        }
        let pricing = currency.uppercased()
        var inclusive = MinorUnits.milliUnits(total, currency: pricing.rawValue)
        var taxAmount = MinorUnits.milliUnits(tax, currency: pricing.rawValue)
        if let charged, charged < total {
            let paid = MinorUnits.milliUnits(charged, currency: pricing.rawValue)
            if let chargedTax, (0...charged).contains(chargedTax) {
                taxAmount = MinorUnits.milliUnits(chargedTax, currency: pricing.rawValue)
            } else {
                taxAmount = Self.mulDivRounded(taxAmount, paid, inclusive)
            }
            inclusive = paid
        }
        var fields: [String: Any] = [
            "lineItemId": id,
            "creationDate": creationDate,
            "eventType": "BUY",
            "quantity": 1,
            "pricingCurrency": pricing,
            "taxCountry": try taxCountry(country),
        ]
        if ReportValidator.reportingCurrencies.contains(pricing) {
            fields["reportingCurrency"] = pricing
        } else {
            guard let exchangeRate else { throw .exchangeRateRequired(currency: pricing) }
            guard exchangeRate.reportingCurrency == "EUR" || exchangeRate.reportingCurrency == "USD",
                let fraction = exchangeRate.fraction, DecimalNumber(exchangeRate.rate) != nil
            else { throw .invalidExchangeRate(exchangeRate.rate) }
            inclusive = Self.mulDivRounded(inclusive, fraction.numerator, fraction.denominator)
            taxAmount = Self.mulDivRounded(taxAmount, fraction.numerator, fraction.denominator)
            fields["reportingCurrency"] = exchangeRate.reportingCurrency
            // `exchangeRate` itself is set on the built item, as decimal text (`DecimalNumber`).
        }
        fields["amountTaxInclusive"] = inclusive
        fields["taxAmount"] = taxAmount
        fields["amountTaxExclusive"] = inclusive - taxAmount
        fields["netAmountTaxExclusive"] = inclusive - taxAmount
        return fields
    }

    /// The `exchangeRate` field: none when Apple takes the pricing currency as it is (Apple: "reportingCurrency"), else
    /// the rate's decimal text (`buyFields` has checked it).
    static func reportedRate(currency: CurrencyCode, _ exchangeRate: ExchangeRate?) -> DecimalNumber? {
        guard !ReportValidator.reportingCurrencies.contains(currency.uppercased()) else { return nil }
        return exchangeRate.flatMap { DecimalNumber($0.rate) }
    }

    /// Apple's alpha-3 `taxCountry` for a Stripe billing country (alpha-2), else the fallback.
    private func taxCountry(_ alpha2: String?) throws(AppleLineItemError) -> String {
        if let alpha2, let alpha3 = CountryCodes.alpha3(forAlpha2: alpha2) { return alpha3 }
        guard CountryCodes.isAlpha3(fallbackTaxCountry) else { throw .unknownTaxCountry(fallbackTaxCountry) }
        return fallbackTaxCountry
    }

    /// round(value × numerator / denominator), halves up, for non-negative values, in 128-bit intermediate
    /// arithmetic (milli-units times a tax amount or a rate's numerator overflow 64 bits).
    static func mulDivRounded(_ value: Int64, _ numerator: Int64, _ denominator: Int64) -> Int64 {
        // Callers pass validated, non-negative amounts; anything else must not bring the server down.
        guard value >= 0, numerator >= 0, denominator > 0 else { return 0 }
        let product = UInt64(value).multipliedFullWidth(by: UInt64(numerator))
        let half = UInt64(denominator) / 2
        let (low, carry) = product.low.addingReportingOverflow(half)
        let high = product.high + (carry ? 1 : 0)
        let divisor = UInt64(denominator)
        // The quotient fits: callers divide by at least the numerator's scale.
        guard high < divisor else { return Int64.max }
        let (quotient, _) = divisor.dividingFullWidth((high: high, low: low))
        return Int64(clamping: quotient)
    }

    /// Apple's line item types are `Codable` with Apple's field names; building them from those names keeps
    /// this mapping next to Apple's documentation and independent of the types' initialisers.
    private static func build<Item: Decodable>(_ fields: [String: Any]) throws(AppleLineItemError) -> Item {
        do {
            // JSONSerialization takes plain values only: an id goes in as its text.
            let plain = fields.mapValues { ($0 as? any Identifier)?.rawValue ?? $0 }
            let data = try JSONSerialization.data(withJSONObject: plain)
            return try JSONDecoder().decode(Item.self, from: data)
        } catch {
            throw .unrepresentable(String(describing: Item.self))
        }
    }
}
