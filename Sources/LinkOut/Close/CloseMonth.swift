import Domain

/// A UTC calendar month, as the close counts it: from 00:00:00.000 UTC on its first day up to, not including,
/// 00:00 UTC on the first day of the next month. Calendar arithmetic in whole days (no time zones, no floating
/// point), so the same month has the same bounds on every machine.
package struct CloseMonth: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let year: Int64
    /// 1 to 12.
    package let month: Int64

    /// The last year a close can name: its last month's deadline (the 15th of the month after) must still be a
    /// four-digit date.
    static let lastYear: Int64 = 9998

    package init?(year: Int64, month: Int64) {
        guard (1970...Self.lastYear).contains(year), (1...12).contains(month) else { return nil }
        self.year = year
        self.month = month
    }

    /// `YYYY-MM`, exactly (`2026-11`); nil for anything else.
    package init?(parsing text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let year = Int64(parts[0]), let month = Int64(parts[1])
        else { return nil }
        self.init(year: year, month: month)
    }

    /// The month holding the instant (UNIX ms).
    package init(containing milliseconds: Int64) {
        let days = milliseconds >= 0 ? milliseconds / Milliseconds.day : (milliseconds + 1) / Milliseconds.day - 1
        let civil = UTCDate.civil(days: days)
        year = min(Self.lastYear, max(1970, civil.year))
        month = civil.month
    }

    package var description: String {
        let month = self.month < 10 ? "0\(self.month)" : "\(self.month)"
        return "\(year)-\(month)"
    }

    package var next: CloseMonth {
        month == 12 ? CloseMonth(unchecked: year + 1, 1) : CloseMonth(unchecked: year, month + 1)
    }

    package var previous: CloseMonth {
        month == 1 ? CloseMonth(unchecked: year - 1, 12) : CloseMonth(unchecked: year, month - 1)
    }

    /// 00:00 UTC on the first day (UNIX ms).
    package var start: Int64 { UTCDate.days(year: year, month: month, day: 1) * Milliseconds.day }
    /// 00:00 UTC on the first day of the next month: the first instant not in this month.
    package var end: Int64 { next.start }

    /// 00:00 UTC on day `day` of the next month: the close is due before that day begins.
    package func deadline(day: Int64) -> Int64 {
        UTCDate.days(year: next.year, month: next.month, day: day) * Milliseconds.day
    }

    package static func < (lhs: CloseMonth, rhs: CloseMonth) -> Bool {
        (lhs.year, lhs.month) < (rhs.year, rhs.month)
    }

    private init(unchecked year: Int64, _ month: Int64) {
        self.year = year
        self.month = month
    }
}
