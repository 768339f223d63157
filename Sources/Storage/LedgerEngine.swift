/// What a database engine does for the `Ledger`: every table read and write, in the ledger's own types. The
/// ledger in front of it owns what does not depend on the engine (the visit journal and its ingestion, checkouts
/// not yet ingested, readiness), so a second engine implements this protocol and no caller changes.
///
/// Every write returns once it is committed (durably, as the engine was opened to commit). Implementations are
/// safe to call from any thread.
protocol LedgerEngine: Sendable {
    /// Transactions committed since opening (each may carry many writes).
    var commitCount: Int { get }
    /// Commits what is queued and stops; later writes fail with `.closed`.
    func close()

    // MARK: the visit journal

    /// The highest journal sequence whose visit is in the tables (0 when none).
    func journalApplied() throws(StorageError) -> Int64
    /// Applies journaled visits and advances `journalApplied` to the last one, in one transaction.
    func applyJournaled(_ batch: [JournalRecord]) throws(StorageError) -> [RecordOutcome]

    // MARK: writes

    func recordVisit(_ visit: Visit) throws(StorageError) -> RecordOutcome
    /// Queues a visit for the next group commit; `completion` runs once it is committed (or failed).
    func submitVisit(_ visit: Visit, completion: @escaping @Sendable (Result<RecordOutcome, StorageError>) -> Void)
    func recordForwardedToken(_ token: TokenFields, checkoutId: String, at: Int64, bindingSource: AccountBindingSource)
        throws(StorageError)
        -> RecordOutcome
    func recordCheckoutIntent(checkoutId: String, productId: String, currency: String, amount: String, at: Int64)
        throws(StorageError) -> Int64
    func checkWritable(at: Int64) throws(StorageError)
    func secret(named name: String) throws(StorageError) -> String
    func suspendWrites(_ suspended: Bool) throws(StorageError)

    // MARK: queries

    func checkout(id: String) throws(StorageError) -> CheckoutRecord?
    func tokens(limit: Int, offset: Int, search: String?, environment: String?) throws(StorageError) -> [StoredToken]
    func token(_ externalPurchaseId: String) throws(StorageError) -> StoredToken?
    func visits(for externalPurchaseId: String, limit: Int) throws(StorageError) -> [Ledger.VisitRow]
    func checkoutIntents(checkoutId: String) throws(StorageError) -> [Ledger.CheckoutIntentRow]
    func count(_ table: Ledger.CountableTable) throws(StorageError) -> Int64

    // MARK: the report outbox

    func lineItems(for externalPurchaseId: String) throws(StorageError) -> [StoredLineItem]
    func reports(for externalPurchaseId: String) throws(StorageError) -> [StoredReport]
    func report(_ requestIdentifier: String) throws(StorageError) -> StoredReport?
    func reports(limit: Int, offset: Int, state: StoredReport.State?) throws(StorageError) -> [StoredReport]
    func dueReports(now: Int64, limit: Int) throws(StorageError) -> [StoredReport]
    func claimDueReports(now: Int64, limit: Int, lease: Lease) throws(StorageError) -> [StoredReport]
    func releaseReportClaims(_ requestIdentifiers: [String], owner: String) throws(StorageError)
    func tokensNeedingReports(
        now: Int64,
        quietSince: Int64,
        paymentsOpenSince: Int64,
        paymentsPendingSince: Int64,
        holdsEndForTokensCreatedBefore: Int64,
        limit: Int
    ) throws(StorageError) -> [StoredToken]
    func isDuplicateToken(_ externalPurchaseId: String) throws(StorageError) -> Bool
    func purchaseLineItems(containing lineItemId: String) throws(StorageError) -> [StoredLineItem]
    func heldLineItems(after rowId: Int64, limit: Int) throws(StorageError) -> [StoredLineItem]
    func heldLineItemCount() throws(StorageError) -> Int64
    func placeHeldLineItem(_ rowId: Int64, on externalPurchaseId: String) throws(StorageError) -> Bool
    func activeCustomerTokens(bundleId: String, environment: String, accounts: [String], at: Int64)
        throws(StorageError) -> [StoredToken]
    func reportSummary() throws(StorageError) -> (
        counts: [StoredReport.State: Int64], oldestUnreported: Int64?, oldestUnreportedCreation: Int64?
    )
    func storeLineItems(_ items: [(lineItemId: String, body: String)], for externalPurchaseId: String, at: Int64)
        throws(StorageError)
    func enqueueReport(_ report: StoredReport, lineItemRows: [Int64]) throws(StorageError)
    func reviseRejectedReport(_ requestIdentifier: String, body: String, lineItemRows: [Int64], now: Int64)
        throws(StorageError)
    func recordAttempt(_ requestIdentifier: String, _ attempt: ReportAttempt, owner: String) throws(StorageError)
    func recordRejection(_ requestIdentifier: String, _ attempt: ReportAttempt, rewrite: ReportRewrite, owner: String)
        throws(StorageError)
    func rejectedReportsWithNewLineItems(after: String?, limit: Int) throws(StorageError) -> [StoredReport]
    func reviveRejectedReport(for externalPurchaseId: String, now: Int64) throws(StorageError) -> Bool
    func replaceRejectedReport(_ requestIdentifier: String, status: String, body: String, note: String, now: Int64)
        throws(StorageError) -> Bool
    func correctLineItem(_ lineItemId: String, of externalPurchaseId: String, replacement: String?, now: Int64)
        throws(StorageError) -> Int
    func needingAttention(limit: Int) throws(StorageError) -> [AttentionEntry]
    func attentionCount() throws(StorageError) -> Int64

    // MARK: payments

    func recordPaymentSession(_ session: PaymentSessionRecord) throws(StorageError) -> PaymentSessionRecord
    func paymentSession(id: String) throws(StorageError) -> PaymentSessionRecord?
    func paymentSession(intentId: String) throws(StorageError) -> PaymentSessionRecord?
    func paymentSessions(checkoutId: String) throws(StorageError) -> [PaymentSessionRecord]
    func storePaymentEvent(_ event: StoredPaymentEvent) throws(StorageError) -> Bool
    func paymentEvents(unprocessedOnly: Bool, dueAt: Int64?, limit: Int) throws(StorageError) -> [StoredPaymentEvent]
    func deferPaymentEvent(provider: String, eventId: String, until: Int64, reason: String) throws(StorageError)
    func purchase(id: String) throws(StorageError) -> PurchaseRecord?
    func purchase(subscriptionId: String) throws(StorageError) -> PurchaseRecord?
    func purchases(externalPurchaseId: String?, limit: Int, offset: Int) throws(StorageError) -> [PurchaseRecord]
    func charge(key: String) throws(StorageError) -> PurchaseCharge?
    func charges(purchaseId: String) throws(StorageError) -> [PurchaseCharge]
    func apply(_ change: PaymentChange) throws(StorageError)
    func heldPaymentEvents(after key: HeldPaymentEvent.Key?, limit: Int) throws(StorageError) -> [HeldPaymentEvent]
    func hasHeldLineItems(externalPurchaseId: String) throws(StorageError) -> Bool
    func deferBehindHold(provider: String, eventId: String, externalPurchaseId: String, until: Int64, reason: String)
        throws(StorageError)

    // MARK: entitlements

    func redeem(codeHash: String, at now: Int64) throws(StorageError) -> RedemptionOutcome
    func purchases(appAccountToken: String) throws(StorageError) -> [PurchaseRecord]
    func dueWebhooks(now: Int64, limit: Int) throws(StorageError) -> [WebhookDelivery]
    func claimDueWebhooks(now: Int64, limit: Int, lease: Lease) throws(StorageError) -> [WebhookDelivery]
    /// Ends every lease (SQLite at open: one process owns the database file, so no lease can be another's).
    func releaseLeases() throws(StorageError)
    func webhooks(state: WebhookDelivery.State?, limit: Int, offset: Int) throws(StorageError) -> [WebhookDelivery]
    func recordWebhookAttempt(_ attempt: WebhookAttempt, owner: String) throws(StorageError)
    func webhookCounts() throws(StorageError) -> [WebhookDelivery.State: Int64]
    // MARK: the operator dashboard

    func dailyTokenCounts(since: Int64) throws(StorageError) -> [Ledger.DailyTokenCount]
    func funnel(since: Int64) throws(StorageError) -> Ledger.Funnel
    func failingReports(limit: Int) throws(StorageError) -> [StoredReport]
    func failingWebhooks(limit: Int) throws(StorageError) -> [WebhookDelivery]
    func startAdminSession(key: String, expiresAt: Int64, now: Int64, keep: Int) throws(StorageError)
    func adminSessionExpiry(key: String) throws(StorageError) -> Int64?
    func endAdminSession(key: String) throws(StorageError)

    // MARK: notifications

    func storeNotification(_ notification: StoredNotification) throws(StorageError) -> Bool
    func notifications(unprocessedOnly: Bool, limit: Int) throws(StorageError) -> [StoredNotification]
    func notification(uuid: String) throws(StorageError) -> StoredNotification?
    func apply(_ change: NotificationChange) throws(StorageError) -> AppliedNotification?
    func setting(named name: String) throws(StorageError) -> String?
    func setSetting(named name: String, to value: String) throws(StorageError)
    /// Which token each of `lineItemIds` was posted for, among the tokens of `bundleId`.
    func lineItemOwners(_ lineItemIds: [String], bundleId: String) throws(StorageError) -> [String: String]
    func historyCheckpoints() throws(StorageError) -> [HistoryCheckpoint]
    func saveHistoryCheckpoint(_ checkpoint: HistoryCheckpoint) throws(StorageError)
    func clearHistoryWindow(startDate: Int64, endDate: Int64) throws(StorageError)
}

/// One visit from the journal with its sequence number.
package typealias JournalRecord = (sequence: Int64, visit: Visit)
