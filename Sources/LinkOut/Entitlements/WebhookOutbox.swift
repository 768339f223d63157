import Storage

/// Entitlement events as an outbox over the entitlement store's webhook deliveries, claimed in each purchase's order (a
/// delivery waits for the purchase's earlier ones).
struct WebhookOutbox: Outbox {
    let store: EntitlementStore

    static let backoff = Backoff.exact

    static func key(of delivery: WebhookDelivery) -> String { delivery.eventId }

    func claimDue(now: Int64, limit: Int, leaseUntil: Int64) throws(StorageError) -> [WebhookDelivery] {
        try store.claimDueWebhooks(now: now, limit: limit, leaseUntil: leaseUntil)
    }

    func record(_ attempt: WebhookAttempt, for delivery: WebhookDelivery) throws(StorageError) {
        try store.recordWebhookAttempt(attempt)
    }

    /// Nothing to give back: the webhook sender claims one delivery per look and sends it at once
    /// (`OutboxSender.Settings.claimLimit` 1), so no claim waits unsent; one cut short by a stop ends with its
    /// lease.
    func release(_ keys: [String]) throws(StorageError) {}
}
