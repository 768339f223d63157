public import Domain

/// A processed payment event whose Apple line item is held, for the token it belongs to and why (an exchange
/// rate within 48 hours of the sale is missing). Its line item is made from the event once the cause is gone.
public struct HeldPaymentEvent: Sendable {
    public var event: StoredPaymentEvent
    public var externalPurchaseId: ExternalPurchaseID
    public var reason: String

    /// Where an event stands in the order held events are released in: oldest first, then by provider and id.
    public struct Key: Sendable, Equatable {
        public var receivedAt: Int64
        public var provider: ProviderID
        public var eventId: String

        public init(receivedAt: Int64, provider: ProviderID, eventId: String) {
            self.receivedAt = receivedAt
            self.provider = provider
            self.eventId = eventId
        }
    }

    public var key: Key { Key(receivedAt: event.receivedAt, provider: event.provider, eventId: event.eventId) }

    public init(event: StoredPaymentEvent, externalPurchaseId: ExternalPurchaseID, reason: String) {
        self.event = event
        self.externalPurchaseId = externalPurchaseId
        self.reason = reason
    }
}
