import Domain

/// One billing period of a subscription, in UNIX milliseconds as Apple wants `subscriptionStartDate` and
/// `subscriptionEndDate` (Apple: "SubscriptionBuyLineItem"). Stripe gives invoice line periods in seconds
/// (`lines.data[].period.start/end`, Stripe API reference: The Invoice object).
public struct SubscriptionPeriod: Sendable, Equatable {
    public var start: Int64
    public var end: Int64

    public init(start: Int64, end: Int64) {
        self.start = start
        self.end = end
    }

    /// The period `interval` long that starts at `start` (ms).
    public init(start: Int64, interval: BillingInterval) {
        self.init(start: start, end: interval.periodEnd(after: start))
    }

    /// The span from the earlier start to the later end of this period and `other` (this one when nil).
    public func joined(with other: SubscriptionPeriod?) -> SubscriptionPeriod {
        guard let other else { return self }
        return SubscriptionPeriod(start: min(start, other.start), end: max(end, other.end))
    }

    /// Whole days of service the period gives, rounded to the nearest day (a month is 28 to 31 days; a period
    /// across a daylight-saving change is still whole days in UTC).
    public var days: Int32 {
        // Saturating: a period restated through the API may span any two Int64 dates.
        let milliseconds = max(Int64.saturating(end, minus: start), 0)
        return Int32(clamping: Int64.saturating(milliseconds, plus: Milliseconds.day / 2) / Milliseconds.day)
    }
}
