import Domain
import Foundation

/// How the dashboard writes times: UTC, to the minute, so operators in any zone read the same thing as the
/// ledger and Apple's notices.
enum DashboardTime {
    private static func components(_ milliseconds: Int64) -> DateComponents {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar.dateComponents(
            [.year, .month, .day, .hour, .minute],
            from: Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        )
    }

    private static func two(_ value: Int?) -> String {
        let value = value ?? 0
        return value < 10 ? "0\(value)" : String(value)
    }

    /// `2026-12-01 07:45 UTC`
    static func timestamp(_ milliseconds: Int64) -> String {
        let parts = components(milliseconds)
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)) UTC"
    }

    /// `2026-12-01` for a day counted from the epoch.
    static func day(_ day: Int64) -> String {
        let parts = components(Milliseconds.days(day))
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day))"
    }

    /// `12-01` for a day counted from the epoch: the chart's axis labels.
    static func shortDay(_ day: Int64) -> String {
        let parts = components(Milliseconds.days(day))
        return "\(two(parts.month))-\(two(parts.day))"
    }

    /// `3 d 4 h`, `5 h 12 min` or `40 s`: an age for people.
    static func age(_ milliseconds: Int64) -> String {
        let seconds = max(0, milliseconds / 1000)
        if seconds >= 86_400 { return "\(seconds / 86_400) d \(seconds % 86_400 / 3600) h" }
        if seconds >= 3600 { return "\(seconds / 3600) h \(seconds % 3600 / 60) min" }
        if seconds >= 60 { return "\(seconds / 60) min" }
        return "\(seconds) s"
    }
}
