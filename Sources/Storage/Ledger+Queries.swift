import Synchronization

/// Reads of tokens, checkouts and visits. They never wait for writes.
extension Ledger {
    /// The checkout behind `/checkout/{id}`; one whose visit is journaled but not yet ingested is found too.
    public func checkout(id: String) throws(StorageError) -> CheckoutRecord? {
        if let pending = shared.pendingCheckouts.withLock({ $0[id] }) { return pending }
        return try engine.checkout(id: id)
    }

    /// Tokens in first-seen order; `search` matches the start of an externalPurchaseId, `environment` filters.
    public func tokens(
        limit: Int = Int.max,
        offset: Int = 0,
        search: String? = nil,
        environment: String? = nil
    ) throws(StorageError) -> [StoredToken] {
        try engine.tokens(limit: limit, offset: offset, search: search, environment: environment)
    }

    /// The token; one the journal holds but the tables do not yet is waited for (briefly), so a token seen a
    /// moment ago is never reported unknown.
    public func token(_ externalPurchaseId: String) throws(StorageError) -> StoredToken? {
        if let token = try engine.token(externalPurchaseId) { return token }
        guard flush(timeout: .seconds(2)) else { return nil }
        return try engine.token(externalPurchaseId)
    }

    /// A token's landing visits, oldest first.
    public func visits(for externalPurchaseId: String, limit: Int = 1000) throws(StorageError) -> [VisitRow] {
        try engine.visits(for: externalPurchaseId, limit: limit)
    }

    /// The products chosen on a checkout's page, oldest first.
    public func checkoutIntents(checkoutId: String) throws(StorageError) -> [CheckoutIntentRow] {
        try engine.checkoutIntents(checkoutId: checkoutId)
    }

    /// Counts rows of a table (tests and status output).
    package func count(_ table: CountableTable) throws(StorageError) -> Int64 {
        try engine.count(table)
    }
}
