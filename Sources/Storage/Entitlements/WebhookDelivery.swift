public import Domain

/// An entitlement event for the developer's backend, in the durable outbox: the exact bytes are fixed when the
/// event is made, so every retry sends the same event id and body; events of one purchase go out in order.
public struct WebhookDelivery: Sendable, Equatable, Codable {
    public var eventId: String
    public var purchaseId: String
    /// Position among the purchase's events (1, 2, …), assigned when stored.
    public var sequence: Int64
    public var type: String
    public var body: String
    public var state: WebhookState
    public var attempts: Int64
    public var nextAttemptAt: Int64
    public var createdAt: Int64
    public var lastAttemptAt: Int64?
    public var lastStatus: Int64?
    public var lastError: String?
    public var deliveredAt: Int64?

    public init(
        eventId: String,
        purchaseId: String,
        sequence: Int64 = 0,
        type: String,
        body: String,
        state: WebhookState = .pending,
        attempts: Int64 = 0,
        nextAttemptAt: Int64,
        createdAt: Int64,
        lastAttemptAt: Int64? = nil,
        lastStatus: Int64? = nil,
        lastError: String? = nil,
        deliveredAt: Int64? = nil
    ) {
        self.eventId = eventId
        self.purchaseId = purchaseId
        self.sequence = sequence
        self.type = type
        self.body = body
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.createdAt = createdAt
        self.lastAttemptAt = lastAttemptAt
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.deliveredAt = deliveredAt
    }
}
