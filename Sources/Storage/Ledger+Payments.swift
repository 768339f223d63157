/// Payments: sessions started from checkouts, provider events stored before they are acknowledged, purchases
/// and their charges. Each write returns once committed.
extension Ledger {
    /// Records a started payment; the same intent again returns the session recorded first (never two).
    public func recordPaymentSession(_ session: PaymentSessionRecord) throws(StorageError) -> PaymentSessionRecord {
        try engine.recordPaymentSession(session)
    }

    public func paymentSession(id: String) throws(StorageError) -> PaymentSessionRecord? {
        try engine.paymentSession(id: id)
    }

    public func paymentSession(intentId: String) throws(StorageError) -> PaymentSessionRecord? {
        try engine.paymentSession(intentId: intentId)
    }

    public func paymentSessions(checkoutId: String) throws(StorageError) -> [PaymentSessionRecord] {
        try engine.paymentSessions(checkoutId: checkoutId)
    }

    /// Stores a provider's event durably; false when this event id was stored before (a redelivery).
    public func storePaymentEvent(_ event: StoredPaymentEvent) throws(StorageError) -> Bool {
        try engine.storePaymentEvent(event)
    }

    /// Stored events, oldest first; with `dueAt`, only unprocessed ones not deferred past it.
    public func paymentEvents(unprocessedOnly: Bool, dueAt: Int64? = nil, limit: Int) throws(StorageError)
        -> [StoredPaymentEvent]
    {
        try engine.paymentEvents(unprocessedOnly: unprocessedOnly, dueAt: dueAt, limit: limit)
    }

    /// Puts off an event that waits for another, so it does not hold up the ones behind it.
    public func deferPaymentEvent(provider: String, eventId: String, until: Int64, reason: String)
        throws(StorageError)
    {
        try engine.deferPaymentEvent(provider: provider, eventId: eventId, until: until, reason: reason)
    }

    public func purchase(id: String) throws(StorageError) -> PurchaseRecord? {
        try engine.purchase(id: id)
    }

    public func purchase(subscriptionId: String) throws(StorageError) -> PurchaseRecord? {
        try engine.purchase(subscriptionId: subscriptionId)
    }

    /// Purchases, newest first; of one token when `externalPurchaseId` is given.
    public func purchases(externalPurchaseId: String? = nil, limit: Int = 100, offset: Int = 0) throws(StorageError)
        -> [PurchaseRecord]
    {
        try engine.purchases(externalPurchaseId: externalPurchaseId, limit: limit, offset: offset)
    }

    public func charge(key: String) throws(StorageError) -> PurchaseCharge? {
        try engine.charge(key: key)
    }

    /// The charges of a purchase (its buy and renewals), oldest first.
    public func charges(purchaseId: String) throws(StorageError) -> [PurchaseCharge] {
        try engine.charges(purchaseId: purchaseId)
    }

    /// Writes everything one event changes in one transaction, marking the event processed.
    public func apply(_ change: PaymentChange) throws(StorageError) {
        try engine.apply(change)
    }
}
