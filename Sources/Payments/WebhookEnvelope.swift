import Domain

/// What the webhook route reads of a verified delivery before storing it: the provider's event id, under which
/// it is deduplicated (providers deliver at least once, in any order), and its type, for logs and the admin API.
public struct WebhookEnvelope: Sendable, Equatable {
    /// At most 255 bytes, never empty.
    public var eventId: String
    /// At most 255 bytes.
    public var type: String
    /// When the provider says the event happened (UNIX milliseconds: Paddle's `occurred_at`, Stripe's `created`):
    /// the events of one `orderKey` are acted on in its order, and the monthly close dates a waiting event by it.
    public var occurredAt: Int64?
    /// The entity whose events are acted on in `occurredAt` order (Paddle's transaction or subscription id).
    /// At most 255 bytes.
    public var orderKey: String?

    /// Whether `text` can be an event id, type or order key: not empty, at most 255 bytes, and no hidden
    /// character. The ledger keys events by it, and SQLite's text ends at a NUL: two ids differing after one were
    /// one event, and the second was dropped as its duplicate.
    public static func isKey(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 255 && !text.unicodeScalars.contains(where: HiddenCharacters.contains)
    }

    public init(eventId: String, type: String, occurredAt: Int64? = nil, orderKey: String? = nil) {
        self.eventId = eventId
        self.type = type
        self.occurredAt = occurredAt
        self.orderKey = orderKey
    }
}
