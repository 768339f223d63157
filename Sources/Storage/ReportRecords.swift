/// A report in the outbox, as stored: the exact JSON body, so every retry sends the same bytes.
public struct StoredReport: Sendable, Equatable, Codable {
    /// `pending` (to send or being retried), `accepted` (Apple answered 200), or `rejected` (Apple answered 400;
    /// not resent until the token's data changes).
    public enum State: String, Sendable, Codable, CaseIterable {
        case pending, accepted, rejected
    }

    public var requestIdentifier: String
    public var externalPurchaseId: String
    public var environment: String
    public var bundleId: String
    public var status: String
    public var body: String
    public var state: State
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
        environment: String,
        bundleId: String,
        status: String,
        body: String,
        state: State = .pending,
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

/// A line item posted for a token (Apple's JSON), and the report that carries it once there is one.
public struct StoredLineItem: Sendable, Equatable, Codable {
    public var rowId: Int64
    public var externalPurchaseId: String
    public var lineItemId: String
    public var body: String
    public var receivedAt: Int64
    public var reportRequestIdentifier: String?
}

/// A token's stored fields, as reporting needs them.
public struct StoredToken: Sendable, Equatable, Codable {
    public var externalPurchaseId: String
    public var appAppleId: Int64
    public var bundleId: String
    public var tokenType: String?
    public var createdAt: Int64
    public var expiresAt: Int64?
    public var environment: String
    public var source: String
    public var appAccountToken: String?
    public var firstSeenAt: Int64
    public var lastSeenAt: Int64
    public var visitCount: Int64
    public var checkoutId: String
}

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
