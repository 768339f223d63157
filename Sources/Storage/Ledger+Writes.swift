import Synchronization

/// Writes outside the journal: each returns once the transaction carrying it is committed.
extension Ledger {
    /// Records a visit and returns once it is committed (the server records visits through the journal).
    package func recordVisit(_ visit: Visit) throws(StorageError) -> RecordOutcome {
        try engine.recordVisit(visit)
    }

    /// Records a token the app forwarded (no visit), with its checkout; returns once committed. Its
    /// `appAccountToken`, if any, binds the token to that account as `AccountBinding` describes: the first binding
    /// holds against the app, and only a backend binding holds against the backend.
    public func recordForwardedToken(
        _ token: TokenFields,
        checkoutId: String,
        at: Int64,
        bindingSource: AccountBindingSource = .app
    ) throws(StorageError) -> RecordOutcome {
        try engine.recordForwardedToken(token, checkoutId: checkoutId, at: at, bindingSource: bindingSource)
    }

    /// Records the product a person chose on a checkout page; returns the intent's id once committed.
    public func recordCheckoutIntent(
        checkoutId: String,
        productId: String,
        currency: String,
        amount: String,
        at: Int64
    ) throws(StorageError) -> Int64 {
        try engine.recordCheckoutIntent(
            checkoutId: checkoutId,
            productId: productId,
            currency: currency,
            amount: amount,
            at: at
        )
    }

    /// Proves the ledger takes writes right now (readiness): a one-row write through the same writer as visits.
    public func checkWritable(at: Int64) throws(StorageError) {
        try engine.checkWritable(at: at)
        // Without a journal the probe takes the visits' own path: when it commits, visits do again (a database
        // back from an outage), even if no landing came to clear the failure (a balancer stopped sending them).
        if recordsVisitsDirectly { shared.health.withLock { $0.journal = nil } }
    }

    /// A named secret kept in the ledger (created at random on first use), e.g. the key for checkout ids.
    public func secret(named name: String) throws(StorageError) -> String {
        try engine.secret(named: name)
    }

    /// Refuses (true) or allows (false) writes, as a read-only disk would. For maintenance windows and for
    /// testing that readiness notices.
    package func suspendWrites(_ suspended: Bool) throws(StorageError) {
        try engine.suspendWrites(suspended)
    }
}
