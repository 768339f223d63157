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

    /// How long the oldest unreported token has waited here, and when Apple's `UNREPORTED` notice comes for the
    /// unreported token whose notice comes first: it counts from the token's creation (or its expiry), not from
    /// when linkout saw it, so a token forwarded late arrives already close to it, or past it.
    static func oldestUnreportedLine(_ firstSeen: Int64?, notice: Int64?, _ now: Int64) -> String {
        guard let firstSeen else { return "oldest unreported token: none" }
        // At 0 at least: a clock stepped back since the token was seen read "first seen -86046 s ago".
        var line = "oldest unreported token: first seen \(max(0, Int64.saturating(now, minus: firstSeen)) / 1000) s ago"
        if let notice {
            let left = Int64.saturating(notice, minus: now) / 1000
            line +=
                left > 0
                ? "; Apple's first UNREPORTED notice for an unreported token comes in \(left) s"
                : "; Apple's first UNREPORTED notice for an unreported token came \(Int64.saturating(0, minus: left)) "
                    + "s ago (Apple may have sent it)"
            line += " (10 days after a token's creation, a custom-link token's at its expiry)"
        }
        return line
    }
}
