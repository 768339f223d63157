import Domain

/// A UTC calendar month, as the close counts it: from 00:00:00.000 UTC on its first day up to, not including,
/// 00:00 UTC on the first day of the next month. Calendar arithmetic in whole days (no time zones, no floating
/// point), so the same month has the same bounds on every machine.
package struct CloseMonth: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let year: Int64
    /// 1 to 12.
    package let month: Int64

    package init?(year: Int64, month: Int64) {
        guard (1970...9999).contains(year), (1...12).contains(month) else { return nil }
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
        let civil = Self.civil(fromDays: days)
        year = min(9999, max(1970, civil.year))
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
    package var start: Int64 { Self.days(year: year, month: month, day: 1) * Milliseconds.day }
    /// 00:00 UTC on the first day of the next month: the first instant not in this month.
    package var end: Int64 { next.start }

    /// 00:00 UTC on day `day` of the next month: the close is due before that day begins.
    package func deadline(day: Int64) -> Int64 {
        Self.days(year: next.year, month: next.month, day: day) * Milliseconds.day
    }

    package static func < (lhs: CloseMonth, rhs: CloseMonth) -> Bool {
        (lhs.year, lhs.month) < (rhs.year, rhs.month)
    }

    private init(unchecked year: Int64, _ month: Int64) {
        self.year = year
        self.month = month
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The year and month of a day count since 1970-01-01 (`civil_from_days`).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month)
    }
}
