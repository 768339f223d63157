/// The report outbox: line items posted for tokens, and the reports built from them or from their absence.
/// Every change that sends or settles a report happens in one transaction with what it depends on, so a crash
/// at any point leaves either the old state or the new one.
extension SQLEngine {
    static let reportColumns = """
        request_identifier, external_purchase_id, environment, bundle_id, status, body, state, attempts,
        next_attempt_at, created_at, last_attempt_at, last_http_status, last_response, accepted_at
        """

    static func storedReport(_ row: [SQLValue]) -> StoredReport {
        var report = StoredReport(
            requestIdentifier: row[0].text ?? "",
            externalPurchaseId: row[1].text ?? "",
            environment: row[2].text ?? "",
            bundleId: row[3].text ?? "",
            status: row[4].text ?? "",
            body: row[5].text ?? "",
            state: StoredReport.State(rawValue: row[6].text ?? "") ?? .pending,
            attempts: row[7].integer ?? 0,
            nextAttemptAt: row[8].integer ?? 0,
            createdAt: row[9].integer ?? 0
        )
        report.lastAttemptAt = row[10].integer
        report.lastHTTPStatus = row[11].integer
        report.lastResponse = row[12].text
        report.acceptedAt = row[13].integer
        return report
    }

    static let lineItemColumns = """
        id, external_purchase_id, line_item_id, body, received_at, report_request_identifier, correction, corrected_at
        """

    static func storedLineItem(_ row: [SQLValue]) -> StoredLineItem {
        StoredLineItem(
            rowId: row[0].integer ?? 0,
            externalPurchaseId: row[1].text ?? "",
            lineItemId: row[2].text ?? "",
            body: row[3].text ?? "",
            receivedAt: row[4].integer ?? 0,
            reportRequestIdentifier: row[5].text,
            correction: row[6].text,
            correctedAt: row[7].integer
        )
    }

    // MARK: reads

    func lineItems(for externalPurchaseId: String) throws(StorageError) -> [StoredLineItem] {
        try read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.lineItemColumns) FROM line_items WHERE external_purchase_id = ? ORDER BY id
                """,
                [.text(externalPurchaseId)]
            ).map(Self.storedLineItem)
        }
    }

    func reports(for externalPurchaseId: String) throws(StorageError) -> [StoredReport] {
        try read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.reportColumns) FROM reports WHERE external_purchase_id = ? ORDER BY created_at",
                [.text(externalPurchaseId)]
            ).map(Self.storedReport)
        }
    }

    func report(_ requestIdentifier: String) throws(StorageError) -> StoredReport? {
        try read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.reportColumns) FROM reports WHERE request_identifier = ?",
                [.text(requestIdentifier)]
            ).first.map(Self.storedReport)
        }
    }

    /// Newest first.
    func reports(limit: Int, offset: Int, state: StoredReport.State?) throws(StorageError)
        -> [StoredReport]
    {
        try read { connection throws(StorageError) in
            let filter = state.map { _ in "WHERE state = ?" } ?? ""
            var parameters: [SQLValue] = state.map { [.text($0.rawValue)] } ?? []
            parameters += [.integer(Int64(limit)), .integer(Int64(offset))]
            return try connection.query(
                "SELECT \(Self.reportColumns) FROM reports \(filter) ORDER BY created_at DESC LIMIT ? OFFSET ?",
                parameters
            ).map(Self.storedReport)
        }
    }

    /// Pending reports whose time has come, oldest first.
    func dueReports(now: Int64, limit: Int) throws(StorageError) -> [StoredReport] {
        try read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.reportColumns) FROM reports WHERE state = 'pending' AND next_attempt_at <= ?
                ORDER BY next_attempt_at LIMIT ?
                """,
                [.integer(now), .integer(Int64(limit))]
            ).map(Self.storedReport)
        }
    }

    /// A payment started this long (8 days) after the token's creation no longer holds its `NO_LINE_ITEM`
    /// report: a hold lasts at most a day (a Checkout Session's life), so every report is due by 9 days after
    /// creation, before Apple's `UNREPORTED` notice at 10 days (spec §5.8).
    static let lastHoldingPayment: Int64 = 8 * 86_400_000

    /// Tokens that need a new report: line items not yet in any report, or no report at all and no line items
    /// and created before `quietSince` (candidates for NO_LINE_ITEM). The wait counts from
    /// `tokenCreationDate`, as Apple's 10-day clock does, not from when linkout first saw the token: a token
    /// forwarded late is due at once. Tokens with an open (pending or rejected) report
    /// are left out: one report at a time per token.
    /// A token with a payment that may still complete (a session opened after `paymentsOpenSince`, or a delayed
    /// payment method pending since after `paymentsPendingSince`) is not reported `NO_LINE_ITEM` yet: the
    /// purchase would follow as a line item. No hold outlasts `holdsEndForTokensCreatedBefore` (Apple's deadline
    /// comes first), and a token Apple announced as unreported (`report_due_at`, set by an `UNREPORTED`
    /// notification) is due at once, whatever the wait or the hold say.
    func tokensNeedingReports(
        quietSince: Int64,
        paymentsOpenSince: Int64,
        paymentsPendingSince: Int64,
        holdsEndForTokensCreatedBefore: Int64,
        limit: Int
    ) throws(StorageError)
        -> [StoredToken]
    {
        try read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.tokenColumns) FROM tokens t
                WHERE NOT EXISTS (SELECT 1 FROM reports r WHERE r.external_purchase_id = t.external_purchase_id
                        AND r.state IN ('pending', 'rejected'))
                  AND (EXISTS (SELECT 1 FROM line_items l WHERE l.external_purchase_id = t.external_purchase_id
                        AND l.report_request_identifier IS NULL AND l.correction IS NULL)
                    OR ((t.token_created_at <= ? OR t.report_due_at IS NOT NULL)
                        AND NOT EXISTS (SELECT 1 FROM reports r WHERE r.external_purchase_id = t.external_purchase_id)
                        AND NOT EXISTS (SELECT 1 FROM line_items l WHERE l.external_purchase_id = t.external_purchase_id)
                        AND (t.report_due_at IS NOT NULL OR t.token_created_at < ? OR NOT EXISTS (
                            SELECT 1 FROM payment_sessions s WHERE s.external_purchase_id = t.external_purchase_id
                            AND s.created_at < t.token_created_at + \(Self.lastHoldingPayment)
                            AND ((s.state = 'open' AND s.created_at > ?)
                                OR (s.state = 'pending' AND s.updated_at > ?))))))
                ORDER BY t.token_created_at LIMIT ?
                """,
                [
                    .integer(quietSince), .integer(holdsEndForTokensCreatedBefore), .integer(paymentsOpenSince),
                    .integer(paymentsPendingSince), .integer(Int64(limit)),
                ]
            ).map(Self.storedToken)
        }
    }

    /// Custom-link tokens of the same customer (same `appAccountToken`), app and type, first seen first.
    func tokensSharingCustomer(_ token: StoredToken) throws(StorageError) -> [StoredToken] {
        guard let account = token.appAccountToken, let type = token.tokenType else { return [] }
        return try read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.tokenColumns) FROM tokens
                WHERE app_account_token = ? AND bundle_id = ? AND token_type = ?
                ORDER BY first_seen_at, external_purchase_id
                """,
                [.text(account), .text(token.bundleId), .text(type)]
            ).map(Self.storedToken)
        }
    }

    /// Reports by state, and of the tokens without an accepted report the oldest first-seen time and the oldest
    /// `tokenCreationDate` (Apple's UNREPORTED notice counts from creation), both from one scan of the tokens.
    func reportSummary() throws(StorageError) -> (
        counts: [StoredReport.State: Int64], oldestUnreported: Int64?, oldestUnreportedCreation: Int64?
    ) {
        try read { connection throws(StorageError) in
            var counts: [StoredReport.State: Int64] = [:]
            for row in try connection.query("SELECT state, count(*) FROM reports GROUP BY state") {
                if let state = StoredReport.State(rawValue: row[0].text ?? "") { counts[state] = row[1].integer ?? 0 }
            }
            let oldest = try connection.query(
                """
                SELECT min(first_seen_at), min(token_created_at) FROM tokens t WHERE NOT EXISTS (SELECT 1 FROM reports r
                    WHERE r.external_purchase_id = t.external_purchase_id AND r.state = 'accepted')
                """
            ).first
            return (counts, oldest?[0].integer, oldest?[1].integer)
        }
    }

    // MARK: writes

    /// Stores posted line items for a token; they wait for the next report.
    func storeLineItems(
        _ items: [(lineItemId: String, body: String)],
        for externalPurchaseId: String,
        at: Int64
    ) throws(StorageError) {
        try writer.write { connection throws(StorageError) in
            for item in items {
                try connection.query(
                    "INSERT INTO line_items (external_purchase_id, line_item_id, body, received_at) VALUES (?, ?, ?, ?)",
                    [.text(externalPurchaseId), .text(item.lineItemId), .text(item.body), .integer(at)]
                )
            }
        }
    }

    /// Puts a new report in the outbox and marks the line items it carries, in one transaction. Fails (and
    /// changes nothing) if the token has an open report already: at most one report in flight per token.
    func enqueueReport(_ report: StoredReport, lineItemRows: [Int64]) throws(StorageError) {
        try writer.write { connection throws(StorageError) in
            if lineItemRows.isEmpty {
                // NO_LINE_ITEM and DUPLICATE_TOKEN are decided once: a token with any report gets no second one.
                let any = try connection.query(
                    "SELECT 1 FROM reports WHERE external_purchase_id = ?",
                    [.text(report.externalPurchaseId)]
                )
                guard any.isEmpty else { throw StorageError(.conflict, "token already reported") }
            }
            let open = try connection.query(
                "SELECT 1 FROM reports WHERE external_purchase_id = ? AND state IN ('pending', 'rejected')",
                [.text(report.externalPurchaseId)]
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
                    [.text(report.requestIdentifier), .integer(row)]
                )
                guard !claimed.isEmpty else { throw StorageError(.conflict, "line item already reported") }
            }
        }
    }

    /// A rejected report whose token's data changed: the new full body under the same requestIdentifier (Apple:
    /// "resubmit the full report using the same requestIdentifier"), pending again.
    func reviseRejectedReport(
        _ requestIdentifier: String,
        body: String,
        lineItemRows: [Int64],
        now: Int64
    ) throws(StorageError) {
        try writer.write { connection throws(StorageError) in
            let rows = try connection.query(
                """
                UPDATE reports SET body = ?, state = 'pending', next_attempt_at = ?
                WHERE request_identifier = ? AND state = 'rejected' RETURNING 1
                """,
                [.text(body), .integer(now), .text(requestIdentifier)]
            )
            guard !rows.isEmpty else { throw StorageError(.conflict, "report is not rejected") }
            for row in lineItemRows {
                try connection.query(
                    "UPDATE line_items SET report_request_identifier = ? WHERE id = ?",
                    [.text(requestIdentifier), .integer(row)]
                )
            }
        }
    }

    /// Records the outcome of one send attempt.
    func recordAttempt(_ requestIdentifier: String, _ attempt: ReportAttempt, owner: String) throws(StorageError) {
        try writer.write { connection throws(StorageError) in
            try connection.query(
                """
                UPDATE reports SET state = ?, attempts = attempts + ?, last_attempt_at = ?, last_http_status = ?,
                    last_response = ?, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL,
                    accepted_at = CASE WHEN ? = 'accepted' THEN ? ELSE accepted_at END
                WHERE request_identifier = ? AND (lease_owner IS NULL OR lease_owner = ?)
                """,
                [
                    .text(attempt.state.rawValue), .integer(attempt.countsAsAttempt ? 1 : 0), .integer(attempt.at),
                    .optional(attempt.httpStatus),
                    .optional(attempt.response), .integer(attempt.nextAttemptAt), .text(attempt.state.rawValue),
                    .integer(attempt.at), .text(requestIdentifier), .text(owner),
                ]
            )
        }
    }

    static func insert(_ report: StoredReport, into connection: any SQLConnection) throws(StorageError) {
        try connection.query(
            """
            INSERT INTO reports (request_identifier, external_purchase_id, environment, bundle_id, status, body, state,
                attempts, next_attempt_at, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(report.requestIdentifier), .text(report.externalPurchaseId), .text(report.environment),
                .text(report.bundleId), .text(report.status), .text(report.body), .text(report.state.rawValue),
                .integer(report.attempts), .integer(report.nextAttemptAt), .integer(report.createdAt),
            ]
        )
    }
}
