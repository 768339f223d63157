import Domain
import Storage

/// Reports to Apple as an outbox over the report store, one open report per token (`enqueueReport`).
struct ReportOutbox: Outbox {
    /// A try and, for a `400` that changes the report (line items set aside, `NO_LINE_ITEM` instead of
    /// `DUPLICATE_TOKEN`), what changes before it goes again.
    struct Attempt: Sendable {
        var attempt: ReportAttempt
        var rewrite: ReportRewrite?
    }

    let store: ReportStore

    static let backoff = Backoff.jittered

    static func key(of report: StoredReport) -> String { report.requestIdentifier.rawValue }

    func claimDue(now: Int64, limit: Int, leaseUntil: Int64) throws(StorageError) -> [StoredReport] {
        try store.claimDueReports(now: now, limit: limit, leaseUntil: leaseUntil)
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
