public import Domain

/// A stored body that may carry a person's data: a provider's event as received, or an entitlement event for
/// the developer's backend.
public struct StoredBody: Sendable, Equatable {
    public enum Kind: Sendable, Hashable {
        /// `payment_events`, keyed by provider and event id.
        case paymentEvent(provider: ProviderID, eventId: String)
        /// `webhook_deliveries`, keyed by event id.
        case webhook(eventId: String)
    }

    public var kind: Kind
    public var body: String

    public init(kind: Kind, body: String) {
        self.kind = kind
        self.body = body
    }
}
