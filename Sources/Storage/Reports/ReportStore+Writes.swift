public import Domain
import Foundation

/// The outbox's writes: line items stored, reports queued, revised, attempted and accepted, each in one
/// transaction with what it depends on.
extension ReportStore {
    /// The `tokenCreationDate` of the oldest token without an accepted report: Apple's UNREPORTED notice counts
    /// from creation, not from when linkout first saw the token.
    public func oldestUnreportedCreation() throws(StorageError) -> Int64? {
        try reportSummary().oldestUnreportedCreation
    }

    /// What posted line items were checked against: the token's newest stored line item not held (its row), and
    /// the app whose other tokens must not hold their ids.
    public struct CheckedAgainst: Sendable {
        public var newestRow: Int64?
        public var bundleId: BundleID

        public init(newestRow: Int64?, bundleId: BundleID) {
            self.newestRow = newestRow
            self.bundleId = bundleId
        }
    }

    /// Stores posted line items for a token; they wait for the next report. With `checked`, only if what they were
    /// checked against still holds when they are written (the app's line-item writers take turns): no line item
    /// stored for the token since, none of their ids taken by another token of the app. Otherwise nothing is
    /// written and `.conflict` says to check them again: two posts at once must not both pass a rule that one
    /// after the other would refuse (an id twice, refunds past the buy).
    public func storeLineItems(
        _ items: [(lineItemId: LineItemID, body: String)],
        for externalPurchaseId: ExternalPurchaseID,
        at: Int64,
        checked: CheckedAgainst? = nil
    ) throws(StorageError) {
        try database.writer.write {
            [dialect = database.dialect, regimes = database.commissionRegimes.current]
            connection throws(StorageError) in
            if let checked {
                try Self.stillHolds(checked, items.map(\.lineItemId), for: externalPurchaseId, in: connection, dialect)
            }
            for item in items {
                try connection.query(
                    "INSERT INTO line_items (external_purchase_id, line_item_id, body, received_at) VALUES (?, ?, ?, ?)",
                    [.id(externalPurchaseId), .id(item.lineItemId), .text(item.body), .integer(at)]
                )
            }
            for item in MoneyRows.buysFirst(items, body: { $0.body }) {
                try MoneyRows.refresh(
                    lineItemId: item.lineItemId,
                    externalPurchaseId: externalPurchaseId,
                    in: connection,
                    dialect: dialect,
                    regimes: regimes
                )
            }
        }
    }

    /// Puts a new report in the outbox and marks the line items it carries, in one transaction. Fails with
    /// `.conflict` (and changes nothing) if the token has an open report already: at most one report in flight
    /// per token.
    public func enqueueReport(_ report: StoredReport, lineItemRows: [Int64]) throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
            if lineItemRows.isEmpty {
                // NO_LINE_ITEM and DUPLICATE_TOKEN are decided once: a token with any report gets no second one.
                let any = try connection.query(
                    "SELECT 1 FROM reports WHERE external_purchase_id = ?",
                    [.id(report.externalPurchaseId)]
                )
                guard any.isEmpty else { throw StorageError(.conflict, "token already reported") }
            }
            let open = try connection.query(
                "SELECT 1 FROM reports WHERE external_purchase_id = ? AND state IN ('pending', 'rejected')",
                [.id(report.externalPurchaseId)]
            )
            guard open.isEmpty else {
                throw StorageError(.conflict, "token already has an open report")
            }
            do throws(StorageError) {
                try Self.insert(report, into: connection)
            } catch {
                // `reports_one_open`: another instance queued one for this token since the check above.
                guard error.code != .constraint else {
                    throw StorageError(.conflict, "token already has an open report")
                }
                throw error
            }
            for row in lineItemRows {
                // A line item goes into one report only: planning from a stale read must not claim it twice.
                let claimed = try connection.query(
                    "UPDATE line_items SET report_request_identifier = ? WHERE id = ? AND report_request_identifier IS NULL RETURNING 1",
                    [.id(report.requestIdentifier), .integer(row)]
                )
                guard !claimed.isEmpty else { throw StorageError(.conflict, "line item already reported") }
            }
            try MoneyRows.claimed(rows: lineItemRows, by: report.requestIdentifier, in: connection)
        }
    }

    /// A rejected report whose token's data changed: the new full body under the same requestIdentifier (Apple:
    /// "resubmit the full report using the same requestIdentifier"), pending again.
    public func reviseRejectedReport(
        _ requestIdentifier: RequestIdentifier,
        body: String,
        lineItemRows: [Int64],
        now: Int64
    ) throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
            let rows = try connection.query(
                """
                UPDATE reports SET body = ?, state = 'pending', next_attempt_at = ?
                WHERE request_identifier = ? AND state = 'rejected' RETURNING 1
                """,
                [.text(body), .integer(now), .id(requestIdentifier)]
            )
            guard !rows.isEmpty else { throw StorageError(.conflict, "report is not rejected") }
            for row in lineItemRows {
                try connection.query(
                    "UPDATE line_items SET report_request_identifier = ? WHERE id = ?",
                    [.id(requestIdentifier), .integer(row)]
                )
            }
            try MoneyRows.claimed(rows: lineItemRows, by: requestIdentifier, in: connection)
        }
    }

    /// Records the outcome of a send by this instance. Dropped if another instance has leased the report since
    /// (this one's lease ended mid-send), or settled it already (its lease then ended too): the other's attempt
    /// is the one that counts. An instance paused mid-send turned a report another had settled as accepted back
    /// to pending, and it was sent again.
    public func recordAttempt(_ requestIdentifier: RequestIdentifier, _ attempt: ReportAttempt) throws(StorageError) {
        try database.writer.write {
            [instance, dialect = database.dialect, regimes = database.commissionRegimes.current]
            connection throws(StorageError) in
            let updated = try connection.query(
                """
                UPDATE reports SET state = ?, attempts = attempts + ?, last_attempt_at = ?, last_http_status = ?,
                    last_response = ?, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL,
                    accepted_at = CASE WHEN ? = 'accepted' THEN coalesce(accepted_at, ?) ELSE accepted_at END
                WHERE request_identifier = ? AND state = 'pending' AND (lease_owner IS NULL OR lease_owner = ?)
                RETURNING external_purchase_id
                """,
                [
                    .text(attempt.state.rawValue), .integer(attempt.countsAsAttempt ? 1 : 0), .integer(attempt.at),
                    .optional(attempt.httpStatus),
                    .optional(attempt.response), .integer(attempt.nextAttemptAt), .text(attempt.state.rawValue),
                    .integer(attempt.at), .id(requestIdentifier), .text(instance),
                ]
            )
            // The day's count first: it sets the token's `accepted_at` only if no report of it was accepted before.
            if attempt.state == .accepted, let token: ExternalPurchaseID = updated.first?.first?.id() {
                try TokenDays.addAcceptedReport(for: token, at: attempt.at, into: connection)
            }
            if attempt.state == .accepted,
                try Self.markAccepted(requestIdentifier, at: attempt.at, connection)
            {
                // Versions that were set aside count as money again: Apple holds them.
                try MoneyRows.refreshReport(requestIdentifier, in: connection, dialect: dialect, regimes: regimes)
            }
            // Apple's acceptance reaches the money rows in the same transaction.
            try MoneyRows.reportChanged(requestIdentifier, in: connection)
        }
    }

    /// Apple accepted the report: its token and the line items it carried are accepted from now, as the monthly
    /// close counts them (`tokens.accepted_at`, `line_items.accepted_at`). Only when the report is accepted now:
    /// an attempt of another instance's lease was dropped above. An event waiting for Apple to hold one of them (a
    /// chargeback's reversal) is tried again at once.
    /// Versions set aside when Apple refused this report that its accepted body still carries (Apple's notice of
    /// an unreported token sends a rejected report again as it was) are Apple's now: accepted as the others, no
    /// longer waiting for a person. Before, they stayed "needs correction", and retracting one dropped it here
    /// without a word to Apple, which held it. Returns whether there were any (their money rows need refreshing).
    @discardableResult
    static func markAccepted(_ requestIdentifier: RequestIdentifier, at: Int64, _ connection: any SQLConnection)
        throws(StorageError) -> Bool
    {
        guard
            let report = try connection.query(
                "SELECT external_purchase_id, body FROM reports WHERE request_identifier = ? AND state = 'accepted'",
                [.id(requestIdentifier)]
            ).first,
            let token = report[0].text
        else { return false }
        let carried = lineItemIds(inReportBody: report[1].text ?? "")
        let rows = try connection.query(
            """
            SELECT id, line_item_id, CASE WHEN correction IS NOT NULL AND corrected_at IS NULL THEN 1 ELSE 0 END
            FROM line_items
            WHERE external_purchase_id = ? AND report_request_identifier = ? ORDER BY id
            """,
            [.text(token), .id(requestIdentifier)]
        )
        // The latest version of each carried line item this report claims; one set aside is the body's only when
        // no later version replaced it in the report (a revision after the refusal).
        var latest: [String: (id: Int64, setAside: Bool)] = [:]
        for row in rows {
            guard let id = row[0].integer, let lineItemId = row[1].text else { continue }
            latest[lineItemId] = (id, row[2].integer == 1)
        }
        let heldNow = latest.filter { carried.contains($0.key) && $0.value.setAside }.map(\.value.id)
        for id in heldNow {
            try connection.query(
                "UPDATE line_items SET correction = NULL, accepted_at = ? WHERE id = ?",
                [.integer(at), .integer(id)]
            )
        }
        try connection.query(
            "UPDATE tokens SET accepted_at = ? WHERE external_purchase_id = ? AND accepted_at IS NULL",
            [.integer(at), .text(token)]
        )
        try connection.query(
            """
            UPDATE line_items SET accepted_at = ?
            WHERE external_purchase_id = ? AND report_request_identifier = ? AND correction IS NULL
              AND accepted_at IS NULL
            """,
            [.integer(at), .text(token), .id(requestIdentifier)]
        )
        try PaymentStore.wakeEvents(behind: ExternalPurchaseID(rawValue: token), at: at, in: connection)
        return !heldNow.isEmpty
    }

    /// The `lineItemId`s of a report's JSON body (none for a body without line items or not JSON).
    static func lineItemIds(inReportBody body: String) -> Set<String> {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let items = object["lineItems"] as? [[String: Any]]
        else { return [] }
        return Set(items.compactMap { $0["lineItemId"] as? String })
    }

    static func insert(_ report: StoredReport, into connection: any SQLConnection) throws(StorageError) {
        try connection.query(
            """
            INSERT INTO reports (request_identifier, external_purchase_id, environment, bundle_id, status, body, state,
                attempts, next_attempt_at, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .id(report.requestIdentifier), .id(report.externalPurchaseId), .text(report.environment.rawValue),
                .id(report.bundleId), .text(report.status.rawValue), .text(report.body), .text(report.state.rawValue),
                .integer(report.attempts), .integer(report.nextAttemptAt), .integer(report.createdAt),
            ]
        )
        // Reports ever queued, for the gauges (reports are never deleted): counted here, not by reading them all.
        try connection.query("UPDATE ledger_counts SET n = n + 1 WHERE name = 'reports'")
        if report.state == .accepted {
            try TokenDays.addAcceptedReport(
                for: report.externalPurchaseId,
                at: report.acceptedAt ?? report.createdAt,
                into: connection
            )
        }
        // The token leaves the planner's indexes of tokens without a report (`needingReportsCondition`).
        try connection.query(
            "UPDATE tokens SET report_queued_at = ? WHERE external_purchase_id = ? AND report_queued_at IS NULL",
            [.integer(report.createdAt), .id(report.externalPurchaseId)]
        )
    }

    private static func stillHolds(
        _ checked: CheckedAgainst,
        _ lineItemIds: [LineItemID],
        for externalPurchaseId: ExternalPurchaseID,
        in connection: any SQLConnection,
        _ dialect: SQLDialect
    ) throws(StorageError) {
        if let serialize = dialect.serializeOnKey {
            try connection.query(serialize, [.text("line-items:" + checked.bundleId.rawValue)])
        }
        let newest = try connection.query(
            // The rows the items were checked against (`lineItems(for:)`): a held renewal waits apart from them.
            "SELECT max(id) FROM line_items WHERE external_purchase_id = ? AND held_since IS NULL",
            [.id(externalPurchaseId)]
        ).first?.first?.integer
        guard newest == checked.newestRow else {
            throw StorageError(.conflict, "line items were stored for the token while these were checked")
        }
        for id in Set(lineItemIds) {
            let taken = try connection.query(
                """
                SELECT 1 FROM line_items l JOIN tokens t ON t.external_purchase_id = l.external_purchase_id
                WHERE l.line_item_id = ? AND t.bundle_id = ? AND l.external_purchase_id <> ? LIMIT 1
                """,
                [.id(id), .id(checked.bundleId), .id(externalPurchaseId)]
            )
            guard taken.isEmpty else {
                throw StorageError(.conflict, "a line item id was stored for another token while these were checked")
            }
        }
    }
}
