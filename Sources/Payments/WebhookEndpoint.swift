/// How a provider takes webhook deliveries at `POST /webhooks/{provider}`: how large a body may be, and the
/// words its refusals use (so each provider's answers name its own header and events).
public struct WebhookEndpoint: Sendable, Equatable {
    /// The largest body; larger is a 413, refused when the head arrives.
    public var maxBodyBytes: Int
    /// The signature header as the provider spells it (`Stripe-Signature`).
    public var signatureHeader: String
    /// One of its events, for messages: `a Stripe event`.
    public var eventName: String

    public init(maxBodyBytes: Int, signatureHeader: String, eventName: String) {
        self.maxBodyBytes = maxBodyBytes
        self.signatureHeader = signatureHeader
        self.eventName = eventName
    }
}
