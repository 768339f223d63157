/// How one line item stands against Apple's commission terms: the regime that covers it, the link tap it counts
/// from, whether it is commissionable, and the estimated commission in milli-units of its reporting currency.
/// A pure value: the same line item and regimes always give the same answer, so it is tested on its boundaries
/// and stored with the line item's money row.
public struct CommissionClassification: Sendable, Equatable, Codable {
    /// The regime that covers the sale; nil when none does (no regime picked, another country, another date).
    public var regimeId: String?
    /// The tap: the token's `tokenCreationDate`, or the landing when that came later.
    public var tapAt: Int64?
    /// Whole days from the tap to the sale (rounded down; 0 for a sale dated before the tap).
    public var daysFromTap: Int64?
    /// Within the regime's window (or the regime has none).
    public var commissionable: Bool
    /// The rate applied to the tax-exclusive amount, in basis points (0 without a regime).
    public var basisPoints: Int64
    /// Estimated commission in milli-units of the reporting currency: positive for a buy, negative for a
    /// refund (it gives back what the buy would have cost), 0 for a retracted item.
    public var commission: Int64

    public init(
        regimeId: String? = nil,
        tapAt: Int64? = nil,
        daysFromTap: Int64? = nil,
        commissionable: Bool = false,
        basisPoints: Int64 = 0,
        commission: Int64 = 0
    ) {
        self.regimeId = regimeId
        self.tapAt = tapAt
        self.daysFromTap = daysFromTap
        self.commissionable = commissionable
        self.basisPoints = basisPoints
        self.commission = commission
    }

    /// What a line item brings to the classification.
    public struct Sale: Sendable, Equatable {
        public var taxCountry: TaxCountry
        /// The line item's `creationDate` (a refund's: the refund's date).
        public var creationDate: Int64
        public var amountTaxExclusive: Int64
        public var isRefund: Bool
        public var retracted: Bool
        /// `subscriptionDaysOfPaidService` of a subscription buy; nil otherwise.
        public var subscriptionDaysOfPaidService: Int64?
        /// The token's `tokenCreationDate` and its first landing, when known.
        public var tokenCreationDate: Int64?
        public var landedAt: Int64?
        /// A refund's buy, as classified: a refund gives back the buy's commission at the buy's rate.
        public var refundedBuy: CommissionClassification?
        /// A renewal's or plan change's `SUBSCRIPTION_START`, as classified (`renewalsInheritWindow`).
        public var subscriptionStart: CommissionClassification?

        public init(
            taxCountry: TaxCountry,
            creationDate: Int64,
            amountTaxExclusive: Int64,
            isRefund: Bool = false,
            retracted: Bool = false,
            subscriptionDaysOfPaidService: Int64? = nil,
            tokenCreationDate: Int64? = nil,
            landedAt: Int64? = nil,
            refundedBuy: CommissionClassification? = nil,
            subscriptionStart: CommissionClassification? = nil
        ) {
            self.taxCountry = taxCountry
            self.creationDate = creationDate
            self.amountTaxExclusive = amountTaxExclusive
            self.isRefund = isRefund
            self.retracted = retracted
            self.subscriptionDaysOfPaidService = subscriptionDaysOfPaidService
            self.tokenCreationDate = tokenCreationDate
            self.landedAt = landedAt
            self.refundedBuy = refundedBuy
            self.subscriptionStart = subscriptionStart
        }
    }

    /// Classifies `sale` under the first of `regimes` that covers it. A sale within `windowDays × 24 h` of the
    /// tap (7 days exactly included: "within 7 days of the link tap") is commissionable. Commission is
    /// `amountTaxExclusive × basisPoints / 10,000` rounded half away from zero, per line item, in integers.
    public static func classify(_ sale: Sale, regimes: [CommissionRegime]) -> CommissionClassification {
        let tap = tapTime(tokenCreationDate: sale.tokenCreationDate, landedAt: sale.landedAt)
        // Saturating: a token's dates come from Apple's notifications as they are, never range-checked.
        let days = tap.map { max(0, Int64.saturating(sale.creationDate, minus: $0)) / Milliseconds.day }
        if sale.isRefund {
            // Refunds reverse the buy: same regime and standing, the refunded amount at the buy's rate.
            guard let buy = sale.refundedBuy else {
                return CommissionClassification(tapAt: tap, daysFromTap: days)
            }
            var result = buy
            result.tapAt = tap ?? buy.tapAt
            result.daysFromTap = days
            result.commission = sale.retracted ? 0 : -apply(buy.basisPoints, to: sale.amountTaxExclusive)
            return result
        }
        guard let regime = regimes.first(where: { $0.covers(taxCountry: sale.taxCountry, at: sale.creationDate) })
        else { return CommissionClassification(tapAt: tap, daysFromTap: days) }
        let inWindow: Bool
        if regime.renewalsInheritWindow, let start = sale.subscriptionStart, start.regimeId == regime.id {
            // A renewal counts as its subscription's start did: the tap led to the subscription.
            inWindow = start.commissionable
        } else if let window = regime.windowDays {
            // Without a known tap the window cannot be shown to have passed: counted as within it (the estimate
            // errs towards what Apple could charge).
            inWindow = tap.map { Int64.saturating(sale.creationDate, minus: $0) <= Milliseconds.days(window) } ?? true
        } else {
            inWindow = true
        }
        let reduced: Bool =
            switch regime.reducedRate {
            case .never: false
            case .always: true
            case .subscriptionAfterOneYear: (sale.subscriptionDaysOfPaidService ?? 0) >= 365
            }
        let windowRate = inWindow ? (reduced ? regime.reducedBasisPoints : regime.standardBasisPoints) : 0
        let rate = windowRate + regime.everySaleBasisPoints
        return CommissionClassification(
            regimeId: regime.id,
            tapAt: tap,
            daysFromTap: days,
            commissionable: inWindow,
            basisPoints: rate,
            commission: sale.retracted ? 0 : apply(rate, to: sale.amountTaxExclusive)
        )
    }

    /// The tap: Apple stamps `tokenCreationDate` when StoreKit issues the token, which is the tap; a landing
    /// recorded later (a clock ahead, a link opened again) is taken as the tap instead.
    public static func tapTime(tokenCreationDate: Int64?, landedAt: Int64?) -> Int64? {
        switch (tokenCreationDate, landedAt) {
        case (let created?, let landed?): max(created, landed)
        case (let created?, nil): created
        case (nil, let landed?): landed
        case (nil, nil): nil
        }
    }

    /// `amount × basisPoints / 10,000`, rounded half away from zero. Amounts are bounded milli-units (at most
    /// 10^15 by the providers' 12 digits), rates at most 10,000, so the product fits in 64 bits.
    public static func apply(_ basisPoints: Int64, to amount: Int64) -> Int64 {
        let product = amount.magnitude.multipliedReportingOverflow(by: UInt64(max(0, basisPoints)))
        guard !product.overflow else { return amount < 0 ? Int64.min + 1 : Int64.max }
        let rounded = Int64(clamping: (product.partialValue + 5_000) / 10_000)
        return amount < 0 ? -rounded : rounded
    }
}
