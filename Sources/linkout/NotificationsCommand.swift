import Foundation
import LinkOut
import Logging
import Storage

/// `linkout notifications recover --since DATE [--until DATE]`: asks Apple's Get Notification History for the
/// external purchase token notifications between the two dates (default until now) and takes each through the
/// same verification, deduplication and action as a delivered one, so nothing is acted on twice. It goes page by
/// page and keeps its place in the ledger: after a failure the same command (same `--since`; without `--until`
/// it takes the interrupted run's end) goes on from the page where it stopped.
enum NotificationsCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        guard arguments.first == "recover" else {
            throw CommandLineInterface.UsageError(
                description: "use 'linkout notifications recover --since DATE [--until DATE]'"
            )
        }
        let (flags, _) = try CommandLineInterface.parseFlags(
            Array(arguments.dropFirst()),
            allowed: ["--since", "--until", "--config", "--data-dir"]
        )
        guard let sinceText = flags["--since"] else {
            throw CommandLineInterface.UsageError(description: "--since DATE is required (e.g. 2025-06-01)")
        }
        let since = try milliseconds(sinceText, flag: "--since")
        let explicitUntil = try flags["--until"].map { try milliseconds($0, flag: "--until") }
        if let explicitUntil, since >= explicitUntil {
            throw CommandLineInterface.UsageError(description: "--since must be before --until")
        }
        let configuration = try Configuration.load(
            overrides: .init(configPath: flags["--config"], dataDir: flags["--data-dir"]),
            provider: .noPayments
        )
        // The reader role leaves the visit journal to a server that may be running on the same folder; SQLite
        // serialises the writes.
        let ledger = try CommandLineInterface.openLedgerBesideServer(configuration)
        defer { ledger.close() }
        let notifications = try AppStoreNotifications(
            configuration: configuration,
            ledger: ledger,
            logger: Logger(label: "linkout", level: configuration.logLevel)
        )
        // Without --until, a run from the same --since that stopped part-way is finished first. An --until ahead
        // of now ends now: Apple's history holds nothing later, and its dates must lie in the past 180 days (a
        // window ending next year was sent to Apple as it was).
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let until = try explicitUntil.map { min($0, now) } ?? notifications.unfinishedWindow(startingAt: since) ?? now
        guard since < until else {
            // --since lies after the window's end: now, where an unfinished run stopped, or --until.
            throw CommandLineInterface.UsageError(
                description: since >= now
                    ? "--since must be in the past (the window ends now at the latest)"
                    : "--since must be before --until"
            )
        }
        let summary = notifications.recover(since: since, until: until)
        CommandLineInterface.printOutput(summary.description + "\n")
        guard summary.failures.isEmpty else {
            CommandLineInterface.printOutput(
                "what was fetched is kept; to go on from where this stopped, run again with --since \(sinceText)"
                    + " --until \(iso(until))\n"
            )
            return 1
        }
        return 0
    }

    static func iso(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// `2025-06-01` (midnight UTC) or an ISO 8601 date and time (`2025-06-01T12:00:00Z`, milliseconds allowed:
    /// `2025-06-01T12:00:00.123Z`, as the resume hint prints a window's end).
    static func milliseconds(_ text: String, flag: String) throws -> Int64 {
        let full = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        guard isWrittenAsRead(text),
            let date = full.date(from: text) ?? fractional.date(from: text) ?? day.date(from: text),
            date.timeIntervalSince1970 >= 0
        else {
            throw CommandLineInterface.UsageError(
                description: "\(flag): '\(text)' is not a date like 2025-06-01 or 2025-06-01T12:00:00Z"
            )
        }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// Whether the day and time as written exist: the formatter rolls what does not over (2026-02-30 is March
    /// 2nd, 25:00 the next day's 01:00), and a typo would silently move the stretch of Apple's history fetched.
    /// A four-digit year, so `-2026-01-01` is no date either.
    static func isWrittenAsRead(_ text: String) -> Bool {
        let digits = Array(text.utf8.prefix(19))
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= digits.count else { return nil }
            let slice = digits[range]
            guard slice.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            return slice.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), (1...12).contains(month)
        else { return false }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let first = DateComponents(calendar: calendar, year: year, month: month, day: 1).date
        guard let first, let days = calendar.range(of: .day, in: .month, for: first), days.contains(day) else {
            return false
        }
        guard text.utf8.count > 10 else { return true }
        guard let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19) else {
            return false
        }
        return hour < 24 && minute < 60 && second < 60
    }
}
