/// What the webhook route reads of a verified delivery before storing it: the provider's event id, under which
/// it is deduplicated (providers deliver at least once, in any order), and its type, for logs and the admin API.
public struct WebhookEnvelope: Sendable, Equatable {
    /// At most 255 bytes, never empty.
    public var eventId: String
    /// At most 255 bytes.
    public var type: String

    public init(eventId: String, type: String) {
        self.eventId = eventId
        self.type = type
    }
}
