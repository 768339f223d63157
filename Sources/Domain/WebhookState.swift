/// Where an entitlement webhook delivery stands in its outbox.
public enum WebhookState: String, Sendable, Codable, CaseIterable {
    case pending
    case delivered
    /// Given up after the retry window (three days).
    case failed
}
