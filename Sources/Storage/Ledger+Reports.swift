/// The report outbox: line items posted for tokens, and the reports built from them or from their absence.
/// Every change that sends or settles a report happens in one transaction with what it depends on, so a crash
/// at any point leaves either the old state or the new one.
extension Ledger {
    /// A token's posted line items, in the order they arrived.
    public func lineItems(for externalPurchaseId: String) throws(StorageError) -> [StoredLineItem] {
        try engine.lineItems(for: externalPurchaseId)
    }

    /// Every line item of the purchase `lineItemId` belongs to (buy, renewals, and what refers to them), on
    /// whichever token each went, held ones included.
    public func purchaseLineItems(containing lineItemId: String) throws(StorageError) -> [StoredLineItem] {
        try engine.purchaseLineItems(containing: lineItemId)
    }

    /// Line items held because no token of the customer was active at their `creationDate`, oldest first, after
    /// the row `after` (keyset paging: the next page starts after the last row of this one).
    public func heldLineItems(after rowId: Int64 = 0, limit: Int) throws(StorageError) -> [StoredLineItem] {
        try engine.heldLineItems(after: rowId, limit: limit)
    }

    /// How many line items are held.
    public func heldLineItemCount() throws(StorageError) -> Int64 {
        try engine.heldLineItemCount()
    }

    /// Moves a held line item onto a token; false when it was placed already.
    public func placeHeldLineItem(_ rowId: Int64, on externalPurchaseId: String) throws(StorageError) -> Bool {
        try engine.placeHeldLineItem(rowId, on: externalPurchaseId)
    }

    /// Custom-link tokens of one of `accounts` active at `at`, that a line item dated `at` may go on; the token
    /// already carrying line items first.
    public func activeCustomerTokens(bundleId: String, environment: String, accounts: [String], at: Int64)
        throws(StorageError) -> [StoredToken]
    {
        try engine.activeCustomerTokens(bundleId: bundleId, environment: environment, accounts: accounts, at: at)
    }

    /// A token's reports, oldest first.
    public func reports(for externalPurchaseId: String) throws(StorageError) -> [StoredReport] {
        try engine.reports(for: externalPurchaseId)
    }

    public func report(_ requestIdentifier: String) throws(StorageError) -> StoredReport? {
        try engine.report(requestIdentifier)
    }

    /// Newest first.
    public func reports(limit: Int, offset: Int = 0, state: StoredReport.State? = nil) throws(StorageError)
        -> [StoredReport]
    {
        try engine.reports(limit: limit, offset: offset, state: state)
    }

    /// Pending reports whose time has come, oldest first.
    public func dueReports(now: Int64, limit: Int) throws(StorageError) -> [StoredReport] {
        try engine.dueReports(now: now, limit: limit)
    }

    /// Claims the due reports for this instance until `leaseUntil` (see `Lease`): with several instances on one
    /// database, each report is sent by one of them.
    public func claimDueReports(now: Int64, limit: Int, leaseUntil: Int64) throws(StorageError) -> [StoredReport] {
        try engine.claimDueReports(now: now, limit: limit, lease: Lease(owner: instance, until: leaseUntil))
    }

    /// Ends this instance's claims on reports it will not send after all.
    public func releaseReportClaims(_ requestIdentifiers: [String]) throws(StorageError) {
        try engine.releaseReportClaims(requestIdentifiers, owner: instance)
    }

    /// Tokens that need a new report: line items not yet in any report, or no report at all and no line items:
    /// a token without an expiry created before `quietSince` and with no payment that may still complete, a
    /// custom-link token once it expired or as a duplicate, any token Apple announced as unreported. Tokens
    /// with an open (pending or rejected) report are left out: one report at a time per token.
    public func tokensNeedingReports(
        now: Int64,
        quietSince: Int64,
        paymentsOpenSince: Int64,
        paymentsPendingSince: Int64,
        holdsEndForTokensCreatedBefore: Int64,
        limit: Int
    ) throws(StorageError) -> [StoredToken] {
        try engine.tokensNeedingReports(
            now: now,
            quietSince: quietSince,
            paymentsOpenSince: paymentsOpenSince,
            paymentsPendingSince: paymentsPendingSince,
            holdsEndForTokensCreatedBefore: holdsEndForTokensCreatedBefore,
            limit: limit
        )
    }

    /// Whether the token is an extra custom-link token of its customer (a refreshed copy, or another token of
    /// the same `appAccountToken` active at the same time) that is reported `DUPLICATE_TOKEN` (spec §3.4).
    public func isDuplicateToken(_ externalPurchaseId: String) throws(StorageError) -> Bool {
        try engine.isDuplicateToken(externalPurchaseId)
    }

    /// Reports by state, and of the tokens without an accepted report the oldest first-seen time and the oldest
    /// `tokenCreationDate`.
    public func reportSummary() throws(StorageError) -> (
        counts: [StoredReport.State: Int64], oldestUnreported: Int64?, oldestUnreportedCreation: Int64?
    ) {
        try engine.reportSummary()
    }

    /// Stores posted line items for a token; they wait for the next report.
    public func storeLineItems(
        _ items: [(lineItemId: String, body: String)],
        for externalPurchaseId: String,
        at: Int64
    ) throws(StorageError) {
        try engine.storeLineItems(items, for: externalPurchaseId, at: at)
    }

    /// Puts a new report in the outbox and marks the line items it carries, in one transaction. Fails with
    /// `.conflict` (and changes nothing) if the token has an open report already: at most one report in flight
    /// per token.
    public func enqueueReport(_ report: StoredReport, lineItemRows: [Int64]) throws(StorageError) {
        try engine.enqueueReport(report, lineItemRows: lineItemRows)
    }

    /// A rejected report whose token's data changed: the new full body under the same requestIdentifier (Apple:
    /// "resubmit the full report using the same requestIdentifier"), pending again.
    public func reviseRejectedReport(
        _ requestIdentifier: String,
        body: String,
        lineItemRows: [Int64],
        now: Int64
    ) throws(StorageError) {
        try engine.reviseRejectedReport(requestIdentifier, body: body, lineItemRows: lineItemRows, now: now)
    }

    /// Records the outcome of one send attempt.
    /// Records the outcome of a send by this instance. Dropped if another instance has leased the report since
    /// (this one's lease ended mid-send): the other's attempt is the one that counts.
    public func recordAttempt(_ requestIdentifier: String, _ attempt: ReportAttempt) throws(StorageError) {
        try engine.recordAttempt(requestIdentifier, attempt, owner: instance)
    }
}
