/// Sums of amounts held at Int64's ends instead of trapping. An amount is bounded where it enters (a line item's
/// ceiling), so no real ledger reaches the ends; a sum that would still overflow shows as the largest figure rather
/// than stopping the process that serves every landing.
extension Int64 {
    /// `a + b`, held at `.max` or `.min`.
    public static func saturating(_ a: Int64, plus b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        guard overflow else { return sum }
        return b > 0 ? .max : .min
    }

    /// `a - b`, held at `.max` or `.min`.
    public static func saturating(_ a: Int64, minus b: Int64) -> Int64 {
        let (difference, overflow) = a.subtractingReportingOverflow(b)
        guard overflow else { return difference }
        return b < 0 ? .max : .min
    }

    /// Adds `other` to this total, held at Int64's ends.
    public mutating func add(saturating other: Int64) {
        self = Self.saturating(self, plus: other)
    }
}
