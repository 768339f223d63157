public import Domain

/// A report in the outbox, as stored: the exact JSON body, so every retry sends the same bytes.
public struct StoredReport: Sendable, Equatable, Codable {
    public var requestIdentifier: String
    public var externalPurchaseId: String
    public var environment: Environment
    public var bundleId: String
    public var status: ReportStatus
    public var body: String
    public var state: ReportState
    public var attempts: Int64
    public var nextAttemptAt: Int64
    public var createdAt: Int64
    public var lastAttemptAt: Int64?
    public var lastHTTPStatus: Int64?
    /// Apple's answer body (its `errors`), or the network error, of the last attempt.
    public var lastResponse: String?
    public var acceptedAt: Int64?

    public init(
        requestIdentifier: String,
        externalPurchaseId: String,
        environment: Environment,
        bundleId: String,
        status: ReportStatus,
        body: String,
        state: ReportState = .pending,
        attempts: Int64 = 0,
        nextAttemptAt: Int64,
        createdAt: Int64
    ) {
        self.requestIdentifier = requestIdentifier
        self.externalPurchaseId = externalPurchaseId
        self.environment = environment
        self.bundleId = bundleId
        self.status = status
        self.body = body
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.createdAt = createdAt
    }
}
