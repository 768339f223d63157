import Foundation

/// Why sending is held back while reporting keeps trying: Apple refused our credentials (401), gave an answer it does
/// not document for sending reports (403, 404, ...), or the key cannot sign. None of these is the report's fault, and
/// none is fixed by hammering Apple, but any of them may end without a restart (a clock that was stepped back, a key
/// rotated in App Store Connect and its file replaced, a transient fault on Apple's side). So sending never stops for
/// good: one report goes out every `probeInterval` until Apple takes one again, and every token's 10-day notice (Apple:
/// "External Purchase Server API") stays reachable.
package struct ReportingBlock: Sendable, Equatable {
    package enum Reason: String, Sendable, CaseIterable {
        case unauthorized
        case undocumentedAnswer = "undocumented_answer"
        case signingFailed = "signing_failed"
    }

    package var reason: Reason
    /// What to check, for the operator (never a secret: the key's path and IDs are configuration).
    package var detail: String
    /// When the condition started (UNIX ms).
    package var since: Int64
    /// When the next probe report may go out (UNIX ms).
    package var nextProbeAt: Int64

    /// Five minutes between probes: one request per instance at that pace costs Apple nothing, and a fixed key
    /// is noticed well within the hours a token has before its notice.
    package static let probeInterval: Int64 = 300_000

    package var description: String {
        "BLOCKED since \(Self.timestamp(since)) (\(reason.rawValue)): \(detail); one report is tried every "
            + "\(Self.probeInterval / 60_000) minutes, next at \(Self.timestamp(nextProbeAt))"
    }

    /// The ledger setting holding the block while it lasts, so `linkout report status` (another process) and a
    /// restarted server see it.
    static let setting = "reporting_blocked"

    /// `reason|since|nextProbeAt|detail`, as kept in the ledger.
    var stored: String { "\(reason.rawValue)|\(since)|\(nextProbeAt)|\(detail)" }

    init(reason: Reason, detail: String, since: Int64, nextProbeAt: Int64) {
        self.reason = reason
        self.detail = detail
        self.since = since
        self.nextProbeAt = nextProbeAt
    }

    /// A block read back from the ledger; nil for an empty or unreadable setting (no block).
    init?(stored: String) {
        let parts = stored.split(separator: "|", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let reason = Reason(rawValue: String(parts[0])), let since = Int64(parts[1]),
            let nextProbeAt = Int64(parts[2])
        else { return nil }
        self.init(reason: reason, detail: String(parts[3]), since: since, nextProbeAt: nextProbeAt)
    }

    /// A moment as reporting's status lines show it (ISO 8601, UTC): a block's, or Apple's 429 pause's end.
    static func timestamp(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
