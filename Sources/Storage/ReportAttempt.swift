/// What happened to one attempt to send a report.
public struct ReportAttempt: Sendable {
    public var state: StoredReport.State
    public var httpStatus: Int64?
    public var response: String?
    /// When to try again (pending reports).
    public var nextAttemptAt: Int64
    public var at: Int64

    public init(state: StoredReport.State, httpStatus: Int64?, response: String?, nextAttemptAt: Int64, at: Int64) {
        self.state = state
        self.httpStatus = httpStatus
        self.response = response
        self.nextAttemptAt = nextAttemptAt
        self.at = at
    }
}
