/// UTC calendar dates as the configuration and the admin API write them (`2026-10-01`) and as UNIX milliseconds, and back, in
/// integer arithmetic (Howard Hinnant's days-from-civil), so no time zone or locale can move a boundary.
public enum UTCDate {
    /// Midnight UTC of the date, in UNIX ms.
    public static func milliseconds(year: Int64, month: Int64, day: Int64) -> Int64 {
        days(year: year, month: month, day: day) * 86_400_000
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day since 1970-01-01.
    public static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `YYYY-MM-DD` of a day since 1970-01-01.
    public static func text(days: Int64) -> String {
        let date = civil(days: days)
        return "\(pad(date.year, 4))-\(pad(date.month, 2))-\(pad(date.day, 2))"
    }

    /// `YYYY-MM` of a day since 1970-01-01.
    public static func monthText(days: Int64) -> String {
        let date = civil(days: days)
        return "\(pad(date.year, 4))-\(pad(date.month, 2))"
    }

    /// Days since 1970-01-01 of `YYYY-MM-DD`, or nil when it is not a real date of that form.
    public static func parseDay(_ text: String) -> Int64? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
            let year = Int64(parts[0]), let month = Int64(parts[1]), let day = Int64(parts[2]),
            (1...12).contains(month), day >= 1
        else { return nil }
        return realDays(year: year, month: month, day: day)
    }

    /// Days since 1970-01-01 of the date, or nil when it is no real date: 2026-02-30 would come back as another one.
    public static func realDays(year: Int64, month: Int64, day: Int64) -> Int64? {
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        let days = days(year: year, month: month, day: day)
        return civil(days: days) == (year, month, day) ? days : nil
    }

    /// The first day (since 1970-01-01) of `YYYY-MM`, or nil.
    public static func parseMonth(_ text: String) -> Int64? {
        parseDay(text + "-01")
    }

    /// The first day of the month after the one holding `days`.
    public static func nextMonth(days: Int64) -> Int64 {
        let date = civil(days: days)
        return date.month == 12
            ? Self.days(year: date.year + 1, month: 1, day: 1)
            : Self.days(year: date.year, month: date.month + 1, day: 1)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
