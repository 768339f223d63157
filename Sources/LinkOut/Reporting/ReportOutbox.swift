import Domain
import Storage
import Synchronization

/// Reports to Apple as an outbox over the report store, one open report per token (`enqueueReport`).
struct ReportOutbox: Outbox {
    /// A try and, for a `400` that changes the report (line items set aside, `NO_LINE_ITEM` instead of
    /// `DUPLICATE_TOKEN`), what changes before it goes again.
    struct Attempt: Sendable {
        var attempt: ReportAttempt
        var rewrite: ReportRewrite?
    }

    /// Reporting's status, one for the service that changes it and the outbox, which leaves out the reports of
    /// the apps it holds back (`ReportingBlock`).
    final class SharedStatus: Sendable {
        private let status: Mutex<ReportingService.Status>

        init(_ status: ReportingService.Status) {
            self.status = Mutex(status)
        }

        func withLock<Value>(_ body: (inout ReportingService.Status) -> Value) -> Value {
            status.withLock { body(&$0) }
        }

        /// The apps whose reports wait while Apple refuses us for them.
        var heldBack: [ReportingScope] { withLock { $0.blockedScopes } }
    }

    let store: ReportStore
    let status: SharedStatus

    static let backoff = Backoff.jittered

    static func key(of report: StoredReport) -> String { report.requestIdentifier.rawValue }

    /// Due reports of every app not held back.
    func claimDue(now: Int64, limit: Int, leaseUntil: Int64) throws(StorageError) -> [StoredReport] {
        try store.claimDueReports(now: now, limit: limit, leaseUntil: leaseUntil, scopes: .excluding(status.heldBack))
    }

    /// Due reports of the apps `scopes` says (a probe of a blocked app).
    func claimDue(now: Int64, limit: Int, leaseUntil: Int64, scopes: ScopeFilter) throws(StorageError)
        -> [StoredReport]
    {
        try store.claimDueReports(now: now, limit: limit, leaseUntil: leaseUntil, scopes: scopes)
    }

    /// A report of an app Apple began refusing after it was claimed.
    func holdsBack(_ report: StoredReport) -> Bool {
        status.heldBack.contains(report.scope)
    }

    func record(_ attempt: Attempt, for report: StoredReport) throws(StorageError) {
        if let rewrite = attempt.rewrite {
            try store.recordRejection(report.requestIdentifier, attempt.attempt, rewrite: rewrite)
        } else {
            try store.recordAttempt(report.requestIdentifier, attempt.attempt)
        }
    }

    func release(_ keys: [String]) throws(StorageError) {
        try store.releaseReportClaims(keys)
    }
}
