public import Domain

/// A report in the outbox, as stored: the exact JSON body, so every retry sends the same bytes.
public struct StoredReport: Sendable, Equatable, Codable {
    public var requestIdentifier: RequestIdentifier
    public var externalPurchaseId: ExternalPurchaseID
    public var environment: Environment
    public var bundleId: BundleID
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
        requestIdentifier: RequestIdentifier,
        externalPurchaseId: ExternalPurchaseID,
        environment: Environment,
        bundleId: BundleID,
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

extension [StoredReport] {
    /// Whether these reports of a token declare it `DUPLICATE_TOKEN` to Apple: "a token you recognise but are not
    /// using to report transactions" (Apple, `ExternalPurchaseReport.status`). One Apple refused does not (it
    /// goes again as something else). Such a token carries no sale: it goes on the customer's token that does.
    public var declareDuplicate: Bool {
        contains { $0.status == .duplicateToken && $0.state != .rejected }
    }
}

extension StoredReport {
    /// The app and environment the report goes for, which Apple may refuse apart from the others.
    public var scope: ReportingScope { ReportingScope(environment: environment, bundleId: bundleId) }
}
