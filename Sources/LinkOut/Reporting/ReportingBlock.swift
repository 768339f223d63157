package import Domain
import Foundation

/// Why sending is held back while reporting keeps trying: Apple refused our credentials (401), gave an answer it does
/// not document for sending reports (403, 404, ...), or the key cannot sign. None of these is the report's fault, and
/// none is fixed by hammering Apple, but any of them may end without a restart (a clock that was stepped back, a key
/// rotated in App Store Connect and its file replaced, a transient fault on Apple's side). So sending never stops for
/// good: one report goes out every `probeInterval` until Apple takes one again, and every token's 10-day notice (Apple:
/// "External Purchase Server API") stays reachable.
///
/// Apple's refusal holds back only the app and environment it came for (`scope`): the JWT names the app and each
/// environment has its own host, so one app Apple does not take (not in the key's team), or a sandbox host that
/// answers 404, never holds back another app's reports. A key that cannot sign holds back every app (no `scope`).
package struct ReportingBlock: Sendable, Equatable {
    package enum Reason: String, Sendable, CaseIterable {
        case unauthorized
        case undocumentedAnswer = "undocumented_answer"
        case signingFailed = "signing_failed"
    }

    package var reason: Reason
    /// The app and environment held back; nil for every app (the key cannot sign).
    package var scope: ReportingScope?
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
        "BLOCKED since \(Self.timestamp(since)) (\(reason.rawValue))"
            + (scope.map { " for \($0.description)" } ?? "") + ": \(detail); one report"
            + (scope == nil ? "" : " of it") + " is tried every \(Self.probeInterval / 60_000) minutes, next at "
            + Self.timestamp(nextProbeAt)
    }

    /// The ledger setting holding the block of every app while it lasts, so `linkout report status` (another
    /// process) and a restarted server see it; an app's block is kept under this name and its scope
    /// (`setting(for:)`).
    static let setting = "reporting_blocked"

    /// The ledger setting of the block of `scope` (nil: every app).
    static func setting(for scope: ReportingScope?) -> String {
        scope.map { "\(setting):\($0.environment.rawValue):\($0.bundleId.rawValue)" } ?? setting
    }

    /// The scope a setting's name keeps a block under: nil for every app's, `.none` for a name that is no block's.
    static func scope(ofSetting name: String) -> ReportingScope?? {
        guard name != setting else { return .some(nil) }
        let parts = name.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == setting, let environment = Environment(rawValue: String(parts[1])),
            !parts[2].isEmpty
        else { return .none }
        return .some(ReportingScope(environment: environment, bundleId: BundleID(String(parts[2]))))
    }

    /// `reason|since|nextProbeAt|detail`, as kept in the ledger.
    var stored: String { "\(reason.rawValue)|\(since)|\(nextProbeAt)|\(detail)" }

    init(reason: Reason, scope: ReportingScope? = nil, detail: String, since: Int64, nextProbeAt: Int64) {
        self.reason = reason
        self.scope = scope
        self.detail = detail
        self.since = since
        self.nextProbeAt = nextProbeAt
    }

    /// A block read back from the ledger; nil for an empty or unreadable setting (no block).
    init?(stored: String, scope: ReportingScope? = nil) {
        let parts = stored.split(separator: "|", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let reason = Reason(rawValue: String(parts[0])), let since = Int64(parts[1]),
            let nextProbeAt = Int64(parts[2])
        else { return nil }
        self.init(reason: reason, scope: scope, detail: String(parts[3]), since: since, nextProbeAt: nextProbeAt)
    }

    /// Whether this block holds back the reports of `scope`.
    func holds(_ scope: ReportingScope) -> Bool {
        self.scope == nil || self.scope == scope
    }

    /// A moment as reporting's status lines show it (ISO 8601, UTC): a block's, or Apple's 429 pause's end.
    static func timestamp(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
