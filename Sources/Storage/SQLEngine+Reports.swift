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
        id, external_purchase_id, line_item_id, body, received_at, report_request_identifier, held_since, correction,
        corrected_at
        """

    static func storedLineItem(_ row: [SQLValue]) -> StoredLineItem {
        StoredLineItem(
            rowId: row[0].integer ?? 0,
            externalPurchaseId: row[1].text ?? "",
            lineItemId: row[2].text ?? "",
            body: row[3].text ?? "",
            receivedAt: row[4].integer ?? 0,
            reportRequestIdentifier: row[5].text,
            heldSince: row[6].integer,
            correction: row[7].text,
            correctedAt: row[8].integer
        )
    }

    // MARK: reads

    /// A token's line items; held ones are on no token yet.
    func lineItems(for externalPurchaseId: String) throws(StorageError) -> [StoredLineItem] {
        try read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.lineItemColumns)
                FROM line_items WHERE external_purchase_id = ? AND held_since IS NULL ORDER BY id
                """,
                [.text(externalPurchaseId)]
            ).map(Self.storedLineItem)
        }
    }

    /// Every line item of the purchase that `lineItemId` belongs to (its buy, renewals and refunds, on whichever
    /// token each went, held ones included), by the charges that name them.
    func purchaseLineItems(containing lineItemId: String) throws(StorageError) -> [StoredLineItem] {
        try read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.lineItemColumns) FROM line_items WHERE line_item_id = ? OR line_item_id IN (
                    SELECT c.line_item_id FROM purchase_charges c WHERE c.purchase_id IN (
                        SELECT p.purchase_id FROM purchase_charges p WHERE p.line_item_id = ?))
                ORDER BY id
                """,
                [.text(lineItemId), .text(lineItemId)]
            ).map(Self.storedLineItem)
        }
    }

    /// Held line items, oldest first.
    func heldLineItems(after rowId: Int64, limit: Int) throws(StorageError) -> [StoredLineItem] {
        try read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.lineItemColumns) FROM line_items WHERE held_since IS NOT NULL AND id > ?
                ORDER BY id LIMIT ?
                """,
                [.integer(rowId), .integer(Int64(limit))]
            ).map(Self.storedLineItem)
        }
    }

    func heldLineItemCount() throws(StorageError) -> Int64 {
        try read { connection throws(StorageError) in
            try connection.query("SELECT count(*) FROM line_items WHERE held_since IS NOT NULL").first?.first?.integer
                ?? 0
        }
    }

    /// Moves a held line item onto the token that will carry it; it waits for the next report of that token.
    /// False when it is no longer held (another instance placed it).
    func placeHeldLineItem(_ rowId: Int64, on externalPurchaseId: String) throws(StorageError) -> Bool {
        try writer.write { connection throws(StorageError) in
            !(try connection.query(
                """
                UPDATE line_items SET external_purchase_id = ?, held_since = NULL
                WHERE id = ? AND held_since IS NOT NULL RETURNING 1
                """,
                [.text(externalPurchaseId), .integer(rowId)]
            ).isEmpty)
        }
    }

    /// Custom-link tokens (`ACQUISITION`/`SERVICES` with an expiry) of the app and environment that are active
    /// at `at` and belong to one of `accounts`, not reported `DUPLICATE_TOKEN`: the tokens a line item dated
    /// `at` may go on (spec §3.4: "any token associated with the customer that is active … at the time of the
    /// transaction"). Tokens with line items first, then the first seen.
    func activeCustomerTokens(
        bundleId: String,
        environment: String,
        accounts: [String],
        at: Int64
    ) throws(StorageError) -> [StoredToken] {
        guard !accounts.isEmpty else { return [] }
        let placeholders = accounts.map { _ in "?" }.joined(separator: ", ")
        return try read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.tokenColumns) FROM tokens t
                WHERE t.app_account_token IN (\(placeholders)) AND t.bundle_id = ? AND t.environment = ?
                  AND \(Self.isCustomLink("t")) AND t.token_created_at <= ? AND t.token_expires_at >= ?
                  AND NOT EXISTS (SELECT 1 FROM reports d WHERE d.external_purchase_id = t.external_purchase_id
                      AND d.status = 'DUPLICATE_TOKEN')
                ORDER BY CASE WHEN EXISTS (SELECT 1 FROM line_items l
                    WHERE l.external_purchase_id = t.external_purchase_id) THEN 0 ELSE 1 END,
                    t.first_seen_at, t.external_purchase_id
                """,
                accounts.map { SQLValue.text($0) } + [
                    .text(bundleId), .text(environment), .integer(at), .integer(at),
                ]
            ).map(Self.storedToken)
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

    /// SQL true for a custom-link token (`ACQUISITION`/`SERVICES` with a `tokenExpirationDate`) in `alias`.
    static func isCustomLink(_ alias: String) -> String {
        "(\(alias).token_type IN ('ACQUISITION', 'SERVICES') AND \(alias).token_expires_at IS NOT NULL)"
    }

    /// SQL true when the token in `t` is an extra custom-link token of its customer (spec §3.4, §5.4), to be
    /// reported `DUPLICATE_TOKEN`. Only `ACQUISITION`/`SERVICES` tokens without line items qualify (Apple refuses
    /// the status for any other type: `DuplicateTokenStatusNotAllowedError`). Its siblings are tokens of the same
    /// app, environment and type that are either
    /// - refreshed copies of it, as Apple describes them: "same creation and expiration dates as the original
    ///   token, but a different externalPurchaseId" (no `appAccountToken` needed, so tokens learned from a
    ///   `CREATED` notification or a landing are grouped too; two tokens that name different accounts are not),
    /// - or tokens of the same `appAccountToken` whose active ranges overlap.
    /// Of a group, the token transactions are reported on is the first with line items, else the first seen;
    /// every other one is the duplicate. A sibling already reported `DUPLICATE_TOKEN` never counts as that one.
    static let isDuplicateToken = """
        (t.token_type IN ('ACQUISITION', 'SERVICES')
            AND NOT EXISTS (SELECT 1 FROM line_items tl WHERE tl.external_purchase_id = t.external_purchase_id)
            AND (\(primarySibling(where: """
                s.token_created_at = t.token_created_at AND s.token_expires_at = t.token_expires_at
                AND (s.app_account_token IS NULL OR t.app_account_token IS NULL
                    OR s.app_account_token = t.app_account_token)
                """))
            OR \(primarySibling(where: """
                s.app_account_token = t.app_account_token
                AND s.token_created_at <= COALESCE(t.token_expires_at, 9223372036854775807)
                AND t.token_created_at <= COALESCE(s.token_expires_at, 9223372036854775807)
                """))))
        """

    /// SQL true when a token `s` of the same app, environment and type as `t`, matching `condition`, is the one
    /// transactions are reported on rather than `t`: it has line items, or was seen first; one reported
    /// `DUPLICATE_TOKEN` never is. Two lookups (refreshed copy, same account) rather than one with an OR, so each
    /// uses its index (`tokens_refresh`, `tokens_account`).
    static func primarySibling(where condition: String) -> String {
        """
        EXISTS (SELECT 1 FROM tokens s WHERE \(condition)
            AND s.bundle_id = t.bundle_id AND s.app_apple_id = t.app_apple_id
            AND s.environment = t.environment AND s.token_type = t.token_type
            AND s.external_purchase_id <> t.external_purchase_id
            AND NOT EXISTS (SELECT 1 FROM reports d WHERE d.external_purchase_id = s.external_purchase_id
                AND d.status = 'DUPLICATE_TOKEN')
            AND (EXISTS (SELECT 1 FROM line_items sl WHERE sl.external_purchase_id = s.external_purchase_id)
                OR s.first_seen_at < t.first_seen_at
                OR (s.first_seen_at = t.first_seen_at AND s.external_purchase_id < t.external_purchase_id)))
        """
    }

    /// Tokens that need a new report: line items not yet in any report, or no report at all and no line items
    /// (candidates for `NO_LINE_ITEM` or `DUPLICATE_TOKEN`). Tokens with an open (pending or rejected) report are
    /// left out: one report at a time per token.
    ///
    /// A token without an expiry (link-out tokens, Japan's and Brazil's `IN_APP`/`LINK_OUT` tokens, and a
    /// custom-link type that came without `tokenExpirationDate`) is due once created before `quietSince`. The
    /// wait counts from `tokenCreationDate`, as Apple's 10-day clock does, not from when linkout first saw the
    /// token: a token forwarded late is due at once. A payment that may still complete (a session opened after
    /// `paymentsOpenSince`, or a delayed payment method pending since after `paymentsPendingSince`) holds it
    /// back: the purchase would follow as a line item. No hold outlasts `holdsEndForTokensCreatedBefore` (Apple's
    /// deadline comes first).
    ///
    /// A custom-link token with an expiry lives up to a year and may take purchases all that time (spec §3.4).
    /// While active it is due only as a duplicate (`isDuplicateToken`) or on Apple's `UNREPORTED` notice; once
    /// expired (`now` past `tokenExpirationDate`) at once, held only by a checkout opened on it before it
    /// expired that may still complete (a day at most). Apple sends `UNREPORTED` "soon after the token expires"
    /// (spec §5.8) without saying how soon, so linkout does not wait for a quiet time.
    ///
    /// A token Apple announced as unreported (`report_due_at`, set by an `UNREPORTED` notification) is due at
    /// once, whatever the wait or the hold say. A token whose sale is held for an exchange rate is never reported
    /// `NO_LINE_ITEM`: it had a transaction, and its line item follows.
    func tokensNeedingReports(
        now: Int64,
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
                        AND l.report_request_identifier IS NULL AND l.held_since IS NULL
                        AND l.correction IS NULL)
                    OR (NOT EXISTS (SELECT 1 FROM reports r WHERE r.external_purchase_id = t.external_purchase_id)
                        AND NOT EXISTS (SELECT 1 FROM line_items l WHERE l.external_purchase_id = t.external_purchase_id)
                        AND NOT EXISTS (SELECT 1 FROM payment_events e WHERE e.held_token = t.external_purchase_id
                            AND e.held_reason IS NOT NULL)
                        AND (t.report_due_at IS NOT NULL
                            OR (NOT \(Self.isCustomLink("t")) AND t.token_created_at <= ?
                                AND (t.token_created_at < ? OR NOT EXISTS (
                                    SELECT 1 FROM payment_sessions s WHERE s.external_purchase_id = t.external_purchase_id
                                    AND s.created_at < t.token_created_at + \(Self.lastHoldingPayment)
                                    AND ((s.state = 'open' AND s.created_at > ?)
                                        OR (s.state = 'pending' AND s.updated_at > ?)))))
                            OR (\(Self.isCustomLink("t")) AND t.token_expires_at <= ? AND NOT EXISTS (
                                    SELECT 1 FROM payment_sessions s WHERE s.external_purchase_id = t.external_purchase_id
                                    AND s.state = 'open' AND s.created_at > ? AND s.created_at < t.token_expires_at))
                            OR \(Self.isDuplicateToken))))
                ORDER BY t.token_created_at LIMIT ?
                """,
                [
                    .integer(quietSince), .integer(holdsEndForTokensCreatedBefore), .integer(paymentsOpenSince),
                    .integer(paymentsPendingSince), .integer(now), .integer(paymentsOpenSince),
                    .integer(Int64(limit)),
                ]
            ).map(Self.storedToken)
        }
    }

    /// Whether the token is an extra custom-link token of its customer, to be reported `DUPLICATE_TOKEN`
    /// (`isDuplicateToken`).
    func isDuplicateToken(_ externalPurchaseId: String) throws(StorageError) -> Bool {
        try read { connection throws(StorageError) in
            !(try connection.query(
                "SELECT 1 FROM tokens t WHERE t.external_purchase_id = ? AND \(Self.isDuplicateToken)",
                [.text(externalPurchaseId)]
            ).isEmpty)
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
