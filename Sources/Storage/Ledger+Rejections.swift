/// Apple's rejections (spec §5.6): what a `400` changed, the rejected reports that can go again, the tokens that
/// need a person, and the operator's corrections. Each change is one transaction.
extension Ledger {
    /// Records a send answered `400` with what it changes (see `ReportRewrite`). Dropped, like `recordAttempt`,
    /// if another instance leased the report since.
    public func recordRejection(
        _ requestIdentifier: String,
        _ attempt: ReportAttempt,
        rewrite: ReportRewrite
    ) throws(StorageError) {
        try engine.recordRejection(requestIdentifier, attempt, rewrite: rewrite, owner: instance)
    }

    /// Rejected reports whose token has new line items, in key order after `after` (keyset paging).
    public func rejectedReportsWithNewLineItems(after: String?, limit: Int) throws(StorageError) -> [StoredReport] {
        try engine.rejectedReportsWithNewLineItems(after: after, limit: limit)
    }

    /// The token's rejected report goes again as it is; false if it has none.
    public func reviveRejectedReport(for externalPurchaseId: String, now: Int64) throws(StorageError) -> Bool {
        try engine.reviveRejectedReport(for: externalPurchaseId, now: now)
    }

    /// New content for a rejected report under its `requestIdentifier`; the line items it carried leave it.
    public func replaceRejectedReport(
        _ requestIdentifier: String,
        status: String,
        body: String,
        note: String,
        now: Int64
    ) throws(StorageError) -> Bool {
        try engine.replaceRejectedReport(requestIdentifier, status: status, body: body, note: note, now: now)
    }

    /// Resolves a line item's set-aside versions and stores `replacement`, if any, for the next report.
    public func correctLineItem(
        _ lineItemId: String,
        of externalPurchaseId: String,
        replacement: String?,
        now: Int64
    ) throws(StorageError) -> Int {
        try engine.correctLineItem(lineItemId, of: externalPurchaseId, replacement: replacement, now: now)
    }

    /// Tokens that need a person, oldest token first.
    public func needingAttention(limit: Int) throws(StorageError) -> [AttentionEntry] {
        try engine.needingAttention(limit: limit)
    }

    public func attentionCount() throws(StorageError) -> Int64 {
        try engine.attentionCount()
    }
}
