public import Domain

/// What happened to one attempt to send a report.
public struct ReportAttempt: Sendable {
    public var state: ReportState
    public var httpStatus: Int64?
    public var response: String?
    /// When to try again (pending reports).
    public var nextAttemptAt: Int64
    public var at: Int64
    /// False when Apple asked us to wait (429): the report is not at fault, so its backoff must not grow.
    public var countsAsAttempt: Bool

    public init(
        state: ReportState,
        httpStatus: Int64?,
        response: String?,
        nextAttemptAt: Int64,
        at: Int64,
        countsAsAttempt: Bool = true
    ) {
        self.state = state
        self.httpStatus = httpStatus
        self.response = response
        self.nextAttemptAt = nextAttemptAt
        self.at = at
        self.countsAsAttempt = countsAsAttempt
    }
}
