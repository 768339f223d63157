import Domain
import LinkOut
import Storage

/// The lines of `linkout report status` that need more than a count.
extension ReportCommand {
    /// Sending as the ledger and the configuration have it (a block Apple gave, usable credentials). On SQLite
    /// nothing is sent while no server runs on the data folder, whatever that state says, so it says so.
    static func reportingLine(_ status: ReportingService.Status, _ storage: Configuration.Storage) -> String {
        guard storage.postgresURL == nil, !Ledger.isServed(directory: storage.dataDir) else {
            return status.description
        }
        return "stopped: no server runs on \(storage.dataDir), so nothing is sent until one starts (then: "
            + "\(status.description))"
    }

    /// How long the oldest unreported token has waited here, and how old the oldest is by its creation, which is
    /// what Apple's `UNREPORTED` notice counts from: a token forwarded or found late arrives already old.
    static func oldestUnreportedLine(_ firstSeen: Int64?, created: Int64?, _ now: Int64) -> String {
        guard let firstSeen else { return "oldest unreported token: none" }
        var line = "oldest unreported token: first seen \((now - firstSeen) / 1000) s ago"
        if let created {
            let age = now.subtractingReportingOverflow(created).partialValue
            let left = ReportingPolicy.unreportedNoticeMilliseconds.subtractingReportingOverflow(age).partialValue
            line += "; the oldest by creation was created \(age / 1000) s ago, "
            line +=
                left > 0
                ? "\(left / 1000) s before Apple's 10-day notice"
                : "\(-left / 1000) s past Apple's 10-day notice (Apple may have sent UNREPORTED)"
        }
        return line
    }
}
