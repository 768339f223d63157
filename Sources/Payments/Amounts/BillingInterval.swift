import Domain
import Foundation

/// How often a subscription bills (Stripe's `recurring[interval]` and `recurring[interval_count]`, Stripe API
/// reference: Create a Checkout Session; Paddle's `billing_cycle`), e.g. every 1 month, every 3 months, every 1 year.
public struct BillingInterval: Sendable, Equatable {
    public enum Unit: String, Sendable, Equatable, CaseIterable {
        case day, week, month, year
    }

    public var unit: Unit
    /// At least 1. A provider may allow less (Stripe: at most three years between bills).
    public var count: Int

    public init(_ unit: Unit, count: Int = 1) {
        self.unit = unit
        self.count = count
    }

    /// The end of the period that starts at `start` (UNIX ms), in calendar terms (UTC): a month from
    /// 31 January ends on the last day of February, as Stripe bills. Used where no provider told us the period
    /// (the demo provider; a subscription start before its first invoice arrived).
    public func periodEnd(after start: Int64) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let component: Calendar.Component =
            switch unit {
            case .day: .day
            case .week: .weekOfYear
            case .month: .month
            case .year: .year
            }
        let startDate = Date(timeIntervalSince1970: TimeInterval(start / 1000))
        let wholeSecondsEnd =
            calendar.date(byAdding: component, value: count, to: startDate)
            .map { Int64($0.timeIntervalSince1970) * 1000 } ?? start / 1000 * 1000 + Milliseconds.days(Int64(count))
        return wholeSecondsEnd + start % 1000
    }
}
