public import Domain

/// A provider's webhook event as received: stored (deduplicated by provider and event id) before it is
/// acknowledged, then acted on from here, so a crash between the two loses nothing.
public struct StoredPaymentEvent: Sendable, Equatable, Codable {
    public var provider: ProviderID
    public var eventId: String
    public var type: String
    /// The raw body, exactly as signed.
    public var body: String
    public var receivedAt: Int64
    public var processedAt: Int64?
    /// What acting on it came to (`purchase recorded`, `ignored`, ...), for the admin view.
    public var outcome: String?
    /// When the provider says it happened (UNIX milliseconds); with `orderKey`, the events of one entity are
    /// acted on in this order, whatever order they arrived in. Nil for providers whose arrival order holds.
    public var occurredAt: Int64?
    /// The provider's entity (a Paddle transaction or subscription) whose events are ordered by `occurredAt`.
    public var orderKey: String?

    public init(
        provider: ProviderID,
        eventId: String,
        type: String,
        body: String,
        receivedAt: Int64,
        processedAt: Int64? = nil,
        outcome: String? = nil,
        occurredAt: Int64? = nil,
        orderKey: String? = nil
    ) {
        self.provider = provider
        self.eventId = eventId
        self.type = type
        self.body = body
        self.receivedAt = receivedAt
        self.processedAt = processedAt
        self.outcome = outcome
        self.occurredAt = occurredAt
        self.orderKey = orderKey
    }
}
