public import Domain

/// What one try to deliver an entitlement event came to.
public struct WebhookAttempt: Sendable {
    public var eventId: String
    public var state: WebhookState
    public var httpStatus: Int64?
    public var error: String?
    public var nextAttemptAt: Int64
    public var at: Int64

    public init(
        eventId: String,
        state: WebhookState,
        httpStatus: Int64?,
        error: String?,
        nextAttemptAt: Int64,
        at: Int64
    ) {
        self.eventId = eventId
        self.state = state
        self.httpStatus = httpStatus
        self.error = error
        self.nextAttemptAt = nextAttemptAt
        self.at = at
    }
}
