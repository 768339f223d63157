/// Redemption codes and entitlement webhooks.
extension Ledger {
    /// Uses up a code (by its hash) if it is valid now; returns once committed.
    public func redeem(codeHash: String, at now: Int64) throws(StorageError) -> RedemptionOutcome {
        try engine.redeem(codeHash: codeHash, at: now)
    }

    /// The purchases of the customer the app identified with this `appAccountToken`, newest first.
    public func purchases(appAccountToken: String) throws(StorageError) -> [PurchaseRecord] {
        try engine.purchases(appAccountToken: appAccountToken)
    }

    /// Deliveries due now, the earliest pending one per purchase.
    public func dueWebhooks(now: Int64, limit: Int) throws(StorageError) -> [WebhookDelivery] {
        try engine.dueWebhooks(now: now, limit: limit)
    }

    /// Claims the due deliveries for this instance until `leaseUntil` (see `Lease`), so one instance sends each.
    public func claimDueWebhooks(now: Int64, limit: Int, leaseUntil: Int64) throws(StorageError) -> [WebhookDelivery] {
        try engine.claimDueWebhooks(now: now, limit: limit, lease: Lease(owner: instance, until: leaseUntil))
    }

    public func webhooks(state: WebhookDelivery.State? = nil, limit: Int = 100, offset: Int = 0) throws(StorageError)
        -> [WebhookDelivery]
    {
        try engine.webhooks(state: state, limit: limit, offset: offset)
    }

    /// Records a delivery attempt by this instance; dropped if another instance has leased it since.
    public func recordWebhookAttempt(_ attempt: WebhookAttempt) throws(StorageError) {
        try engine.recordWebhookAttempt(attempt, owner: instance)
    }

    public func webhookCounts() throws(StorageError) -> [WebhookDelivery.State: Int64] {
        try engine.webhookCounts()
    }
}
