/// A stored provider event, decoded: what it means (`payload`, in the provider's neutral terms) and whether
/// the provider says it moved real money.
public struct ProviderEvent: Sendable, Equatable {
    public var payload: PaymentEvent
    /// The event itself says live (Stripe's `livemode`). It counts as a sale only when the provider's `mode` is
    /// `.live` too: a test key's events never do.
    public var isLive: Bool

    public init(payload: PaymentEvent, isLive: Bool) {
        self.payload = payload
        self.isLive = isLive
    }
}
