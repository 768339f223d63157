/// Line items held back from Apple until an exchange rate arrives (see `HeldPaymentEvent`).
extension Ledger {
    /// Held events, oldest first: the order their line items are made in once released. `after`: the key of the
    /// last event of the previous page (keyset paging), nil for the first page.
    public func heldPaymentEvents(after key: HeldPaymentEvent.Key? = nil, limit: Int = 500) throws(StorageError)
        -> [HeldPaymentEvent]
    {
        try engine.heldPaymentEvents(after: key, limit: limit)
    }

    /// Whether a line item of this token is held: later line items of the token wait behind it, so Apple gets
    /// them in the order they happened (a renewal after its start, a refund after its buy).
    public func hasHeldLineItems(externalPurchaseId: String) throws(StorageError) -> Bool {
        try engine.hasHeldLineItems(externalPurchaseId: externalPurchaseId)
    }

    /// Puts off an event that waits behind a held line item of its token; the hold's release makes it due.
    public func deferBehindHold(
        provider: String,
        eventId: String,
        externalPurchaseId: String,
        until: Int64,
        reason: String
    ) throws(StorageError) {
        try engine.deferBehindHold(
            provider: provider,
            eventId: eventId,
            externalPurchaseId: externalPurchaseId,
            until: until,
            reason: reason
        )
    }
}
