public import Domain

/// The report outbox: line items posted for tokens, and the reports built from them or from their absence.
/// Every change that sends or settles a report happens in one transaction with what it depends on, so a crash
/// at any point leaves either the old state or the new one.
public struct ReportStore: Sendable {
    let database: SQLDatabase
    /// This process's name in outbox leases (`Ledger.instance`).
    let instance: String

    static let reportColumns = """
        request_identifier, external_purchase_id, environment, bundle_id, status, body, state, attempts,
        next_attempt_at, created_at, last_attempt_at, last_http_status, last_response, accepted_at
        """

    static func storedReport(_ row: [SQLValue]) throws(StorageError) -> StoredReport {
        var report = StoredReport(
            requestIdentifier: row[0].text ?? "",
            externalPurchaseId: row[1].text ?? "",
            environment: try row[2].closedSet("reports.environment"),
            bundleId: row[3].text ?? "",
            status: try row[4].closedSet("reports.status"),
            body: row[5].text ?? "",
            state: try row[6].closedSet("reports.state"),
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

    /// A token's posted line items, in the order they arrived.
    public func lineItems(for externalPurchaseId: String) throws(StorageError) -> [StoredLineItem] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.lineItemColumns)
                FROM line_items WHERE external_purchase_id = ? AND held_since IS NULL ORDER BY id
                """,
                [.text(externalPurchaseId)]
            ).decoded(Self.storedLineItem)
        }
    }

    /// Every version of the line item `lineItemId`, on whichever token it went, oldest first.
    public func lineItemVersions(_ lineItemId: String) throws(StorageError) -> [StoredLineItem] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.lineItemColumns) FROM line_items WHERE line_item_id = ? ORDER BY id",
                [.text(lineItemId)]
            ).decoded(Self.storedLineItem)
        }
    }

    /// Every line item of the purchase `lineItemId` belongs to (buy, renewals, and what refers to them), on
    /// whichever token each went, held ones included.
    public func purchaseLineItems(containing lineItemId: String) throws(StorageError) -> [StoredLineItem] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.lineItemColumns) FROM line_items WHERE line_item_id = ? OR line_item_id IN (
                    SELECT c.line_item_id FROM purchase_charges c WHERE c.purchase_id IN (
                        SELECT p.purchase_id FROM purchase_charges p WHERE p.line_item_id = ?))
                ORDER BY id
                """,
                [.text(lineItemId), .text(lineItemId)]
            ).decoded(Self.storedLineItem)
        }
    }

    /// Line items held because no token of the customer was active at their `creationDate`, oldest first, after
    /// the row `after` (keyset paging: the next page starts after the last row of this one).
    public func heldLineItems(after rowId: Int64 = 0, limit: Int) throws(StorageError) -> [StoredLineItem] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.lineItemColumns) FROM line_items WHERE held_since IS NOT NULL AND id > ?
                ORDER BY id LIMIT ?
                """,
                [.integer(rowId), .integer(Int64(limit))]
            ).decoded(Self.storedLineItem)
        }
    }

    /// How many line items are held.
    public func heldLineItemCount() throws(StorageError) -> Int64 {
        try database.readers.read { connection throws(StorageError) in
            try connection.query("SELECT count(*) FROM line_items WHERE held_since IS NOT NULL").first?.first?.integer
                ?? 0
        }
    }

    /// Moves a held line item onto a token; false when it was placed already.
    public func placeHeldLineItem(_ rowId: Int64, on externalPurchaseId: String) throws(StorageError) -> Bool {
        try database.writer.write {
            [dialect = database.dialect, regimes = database.commissionRegimes.current]
            connection throws(StorageError) in
            guard
                let placed = try connection.query(
                    """
                    UPDATE line_items SET external_purchase_id = ?, held_since = NULL
                    WHERE id = ? AND held_since IS NOT NULL RETURNING line_item_id
                    """,
                    [.text(externalPurchaseId), .integer(rowId)]
                ).first
            else { return false }
            try MoneyRows.refresh(
                lineItemId: placed[0].text ?? "",
                externalPurchaseId: externalPurchaseId,
                in: connection,
                dialect: dialect,
                regimes: regimes
            )
            return true
        }
    }

    /// Custom-link tokens of one of `accounts` active at `at`, that a line item dated `at` may go on; the token
    /// already carrying line items first.
    public func activeCustomerTokens(bundleId: String, environment: Environment, accounts: [String], at: Int64)
        throws(StorageError) -> [StoredToken]
    {
        guard !accounts.isEmpty else { return [] }
        let placeholders = accounts.map { _ in "?" }.joined(separator: ", ")
        return try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(TokenStore.tokenColumns) FROM tokens t
                WHERE t.app_account_token IN (\(placeholders)) AND t.bundle_id = ? AND t.environment = ?
                  AND \(ReportingPolicy.SQL.isActive("t"))
                  AND NOT EXISTS (SELECT 1 FROM reports d WHERE d.external_purchase_id = t.external_purchase_id
                      AND d.status = 'DUPLICATE_TOKEN')
                ORDER BY CASE WHEN EXISTS (SELECT 1 FROM line_items l
                    WHERE l.external_purchase_id = t.external_purchase_id) THEN 0 ELSE 1 END,
                    t.first_seen_at, t.external_purchase_id
                """,
                accounts.map { SQLValue.text($0) } + [
                    .text(bundleId), .text(environment.rawValue), .integer(at), .integer(at),
                ]
            ).decoded(TokenStore.storedToken)
        }
    }

    /// A token's reports, oldest first.
    public func reports(for externalPurchaseId: String) throws(StorageError) -> [StoredReport] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.reportColumns) FROM reports WHERE external_purchase_id = ? ORDER BY created_at",
                [.text(externalPurchaseId)]
            ).decoded(Self.storedReport)
        }
    }

    public func report(_ requestIdentifier: String) throws(StorageError) -> StoredReport? {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.reportColumns) FROM reports WHERE request_identifier = ?",
                [.text(requestIdentifier)]
            ).firstDecoded(Self.storedReport)
        }
    }

    /// Newest first.
    public func reports(limit: Int, offset: Int = 0, state: ReportState? = nil) throws(StorageError)
        -> [StoredReport]
    {
        try database.readers.read { connection throws(StorageError) in
            let filter = state.map { _ in "WHERE state = ?" } ?? ""
            var parameters: [SQLValue] = state.map { [.text($0.rawValue)] } ?? []
            parameters += [.integer(Int64(limit)), .integer(Int64(offset))]
            return try connection.query(
                "SELECT \(Self.reportColumns) FROM reports \(filter) ORDER BY created_at DESC LIMIT ? OFFSET ?",
                parameters
            ).decoded(Self.storedReport)
        }
    }

    /// Pending reports whose time has come, oldest first.
    public func dueReports(now: Int64, limit: Int) throws(StorageError) -> [StoredReport] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.reportColumns) FROM reports WHERE state = 'pending' AND next_attempt_at <= ?
                ORDER BY next_attempt_at LIMIT ?
                """,
                [.integer(now), .integer(Int64(limit))]
            ).decoded(Self.storedReport)
        }
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
        (\(ReportingPolicy.SQL.mayBeDuplicate("t"))
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
    /// uses its index (`tokens_refresh`, `tokens_account`). The type's set is repeated (`t`'s is in it already)
    /// so the lookup may use `tokens_refresh`, which holds only the types that can be duplicates.
    static func primarySibling(where condition: String) -> String {
        """
        EXISTS (SELECT 1 FROM tokens s WHERE \(condition)
            AND s.bundle_id = t.bundle_id AND s.app_apple_id = t.app_apple_id
            AND s.environment = t.environment AND s.token_type = t.token_type
            AND \(ReportingPolicy.SQL.mayBeDuplicate("s"))
            AND s.external_purchase_id <> t.external_purchase_id
            AND NOT EXISTS (SELECT 1 FROM reports d WHERE d.external_purchase_id = s.external_purchase_id
                AND d.status = 'DUPLICATE_TOKEN')
            AND (EXISTS (SELECT 1 FROM line_items sl WHERE sl.external_purchase_id = s.external_purchase_id)
                OR s.first_seen_at < t.first_seen_at
                OR (s.first_seen_at = t.first_seen_at AND s.external_purchase_id < t.external_purchase_id)))
        """
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
        duplicateWindow: DuplicateWindow,
        limit: Int
    ) throws(StorageError) -> [StoredToken] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(TokenStore.tokenColumns) FROM tokens t \(Self.needingReportsCondition)",
                [.integer(quietSince), .integer(now)] + duplicateWindow.parameters + [
                    .integer(quietSince), .integer(holdsEndForTokensCreatedBefore),
                    .integer(paymentsOpenSince), .integer(paymentsPendingSince), .integer(now),
                    .integer(paymentsOpenSince), .integer(Int64(limit)),
                ]
            ).decoded(TokenStore.storedToken)
        }
    }

    /// The next `size` custom-link tokens without a report after `after`, in the order of
    /// `tokens_custom_link_order`: the window of unexpired ones a planner pass checks for duplicates. When none
    /// follows `after` the window starts at the start again, so a pass never checks nothing while some wait.
    public func duplicateWindow(after: CustomLinkKey?, size: Int) throws(StorageError) -> DuplicateWindow {
        try database.readers.read { connection throws(StorageError) in
            var keys = try Self.customLinkKeys(connection, after: after ?? .start, size: size)
            var start = after
            if keys.isEmpty, after != nil {
                keys = try Self.customLinkKeys(connection, after: .start, size: size)
                start = nil
            }
            return DuplicateWindow(after: start, through: keys.last, isFull: keys.count >= size)
        }
    }

    private static func customLinkKeys(
        _ connection: any SQLConnection,
        after: CustomLinkKey,
        size: Int
    ) throws(StorageError) -> [CustomLinkKey] {
        try connection.query(
            customLinkKeysSQL,
            [.integer(after.createdAt), .text(after.externalPurchaseId), .integer(Int64(size))]
        ).map { row in
            CustomLinkKey(createdAt: row[0].integer ?? 0, externalPurchaseId: row[1].text ?? "")
        }
    }

    /// The keys of the custom-link tokens without a report after a place (creation date, identifier), in order,
    /// limited: a range of `tokens_custom_link_order`, at most the limit's entries read.
    static let customLinkKeysSQL = """
        SELECT w.token_created_at, w.external_purchase_id FROM tokens w
        WHERE w.report_queued_at IS NULL AND \(ReportingPolicy.SQL.isReportedAtExpiry("w"))
            AND (w.token_created_at, w.external_purchase_id) > (?, ?)
        ORDER BY w.token_created_at, w.external_purchase_id LIMIT ?
        """

    /// What may be due: the first condition of `needingReportsCondition`, each part through its own index.
    static let needingReportsCandidates = """
                SELECT l.external_purchase_id FROM line_items l
                WHERE l.report_request_identifier IS NULL AND l.held_since IS NULL AND l.correction IS NULL
                UNION ALL
                SELECT w.external_purchase_id FROM tokens w
                WHERE w.report_queued_at IS NULL AND w.report_due_at IS NULL
                    AND \(ReportingPolicy.SQL.waitsQuietTime("w")) AND w.token_created_at <= ?
                UNION ALL
                SELECT w.external_purchase_id FROM tokens w
                WHERE w.report_queued_at IS NULL AND w.report_due_at IS NOT NULL
                UNION ALL
                SELECT w.external_purchase_id FROM tokens w
                WHERE w.report_queued_at IS NULL AND w.report_due_at IS NULL
                    AND \(ReportingPolicy.SQL.isReportedAtExpiry("w")) AND \(ReportingPolicy.SQL.hasExpired("w"))
                UNION ALL
                SELECT w.external_purchase_id FROM tokens w
                WHERE w.report_queued_at IS NULL AND \(ReportingPolicy.SQL.isReportedAtExpiry("w"))
                    AND (w.token_created_at, w.external_purchase_id) > (?, ?)
                    AND (w.token_created_at, w.external_purchase_id) <= (?, ?)
        """

    /// The planner's condition on `tokens t`, ordered and limited. Parameters: the quiet time's end, now, the
    /// duplicate window (after: creation date and identifier; through: the same), the quiet time's end, the end
    /// of holds, payments open since, payments pending since, now, payments open since, the limit.
    ///
    /// The first condition reads only what may be due, each through its own index, so a pass costs what is
    /// due rather than what is stored: tokens with line items no report carries (`line_items_unreported`),
    /// tokens without an expiry and a report that waited the quiet time (`tokens_awaiting_quiet`, a range),
    /// tokens Apple announced (`tokens_awaiting_announced`), custom-link tokens (any with an expiry, see
    /// `ReportingPolicy`) without a report that expired (`tokens_awaiting_expiry`, a range up to now), and a
    /// window of the rest of the custom-link tokens (`tokens_custom_link_order`, a range of the key between two
    /// places).
    ///
    /// An unexpired custom-link token is due only as a duplicate, and only the window's are checked: a pass
    /// reads at most what is due plus the window, never every custom-link token (one or two per install, each
    /// unreported until it expires, up to a year). The planner moves the window on each pass and starts again at
    /// the start after the last, so a duplicate is found within as many passes as there are windows of
    /// unreported custom-link tokens (at 500 a window and a pass a minute, a million of them take 2,000 passes,
    /// about a day and a half). Apple is not waiting on a duplicate: it reminds of an active custom-link token
    /// without a report only monthly (spec §3.4, §5.8), and the token is reported on its expiry if not before.
    /// Every other token the rest of the condition admits is in one of the ranges, so apart from that delay the
    /// result is the same as the rest alone.
    static let needingReportsCondition = """
        WHERE t.external_purchase_id IN (\(needingReportsCandidates))
          AND NOT EXISTS (SELECT 1 FROM reports r WHERE r.external_purchase_id = t.external_purchase_id
                AND r.state IN ('pending', 'rejected'))
          AND (EXISTS (SELECT 1 FROM line_items l WHERE l.external_purchase_id = t.external_purchase_id
                AND l.report_request_identifier IS NULL AND l.held_since IS NULL
                AND l.correction IS NULL)
            OR (NOT EXISTS (SELECT 1 FROM reports r WHERE r.external_purchase_id = t.external_purchase_id)
                AND NOT EXISTS (SELECT 1 FROM line_items l WHERE l.external_purchase_id = t.external_purchase_id
                    AND \(Self.standsForSomething("l")))
                AND NOT EXISTS (SELECT 1 FROM payment_events e WHERE e.held_token = t.external_purchase_id
                    AND e.held_reason IS NOT NULL)
                AND (t.report_due_at IS NOT NULL
                    OR (\(ReportingPolicy.SQL.waitsQuietTime("t")) AND t.token_created_at <= ?
                        AND (t.token_created_at < ? OR NOT EXISTS (
                            SELECT 1 FROM payment_sessions s WHERE s.external_purchase_id = t.external_purchase_id
                            AND s.created_at < t.token_created_at + \(ReportingPolicy.lastHoldingPaymentMilliseconds)
                            AND ((s.state = 'open' AND s.created_at > ?)
                                OR (s.state = 'pending' AND s.updated_at > ?)))))
                    OR (\(ReportingPolicy.SQL.isReportedAtExpiry("t")) AND \(ReportingPolicy.SQL.hasExpired("t"))
                        AND NOT EXISTS (
                            SELECT 1 FROM payment_sessions s WHERE s.external_purchase_id = t.external_purchase_id
                            AND s.state = 'open' AND s.created_at > ? AND s.created_at <= t.token_expires_at))
                    OR \(isDuplicateToken))))
        ORDER BY t.token_created_at LIMIT ?
        """

    /// SQL true for a line item version in `alias` that counts for its token: anything but a version set aside
    /// and then dropped (corrected without a replacement), which Apple never got. A token whose only item was
    /// set aside and dropped is reported as a token without line items, not left unreported.
    static func standsForSomething(_ alias: String) -> String {
        "(\(alias).correction IS NULL OR \(alias).corrected_at IS NULL)"
    }

    /// Whether the token is an extra custom-link token of its customer (a refreshed copy, or another token of
    /// the same `appAccountToken` active at the same time) that is reported `DUPLICATE_TOKEN` (spec §3.4).
    public func isDuplicateToken(_ externalPurchaseId: String) throws(StorageError) -> Bool {
        try database.readers.read { connection throws(StorageError) in
            !(try connection.query(
                "SELECT 1 FROM tokens t WHERE t.external_purchase_id = ? AND \(Self.isDuplicateToken)",
                [.text(externalPurchaseId)]
            ).isEmpty)
        }
    }

    /// Reports by state, and of the tokens without an accepted report the oldest first-seen time and the oldest
    /// `tokenCreationDate`. Read from what is open, never from every report or token: pending and rejected
    /// reports are counted through their indexes, accepted ones are the rest of `ledger_counts`' reports; the
    /// tokens without an accepted report are those without any (`tokens_awaiting_*`) and those whose every
    /// report is open.
    public func reportSummary() throws(StorageError) -> (
        counts: [ReportState: Int64], oldestUnreported: Int64?, oldestUnreportedCreation: Int64?
    ) {
        try database.readers.read { connection throws(StorageError) in
            let row = try connection.query(
                """
                SELECT (SELECT count(*) FROM reports WHERE state = 'pending'),
                    (SELECT count(*) FROM reports WHERE state = 'rejected'),
                    (SELECT n FROM ledger_counts WHERE name = 'reports')
                """
            ).first
            // A state this version does not know is an error, not an accepted report: found through ranges of
            // `reports_due` around the known states, never by reading every report.
            for unknown in try connection.query(Self.unknownStateSQL) {
                let _: ReportState = try unknown[0].closedSet("reports.state")
            }
            let pending = row?[0].integer ?? 0
            let rejected = row?[1].integer ?? 0
            let accepted = max(0, (row?[2].integer ?? 0) - pending - rejected)
            var counts: [ReportState: Int64] = [:]
            for (state, count) in [(ReportState.pending, pending), (.rejected, rejected), (.accepted, accepted)]
            where count > 0 {
                counts[state] = count
            }
            let oldest = try connection.query(Self.oldestUnreportedSQL).first
            return (counts, oldest?[0].integer, oldest?[1].integer)
        }
    }

    /// The oldest first-seen time and `tokenCreationDate` of the tokens without an accepted report, each read
    /// from an index's first entry: `tokens_unaccepted` for the first; for the second the first of each of the
    /// planner's indexes of tokens without a report, and the tokens whose every report is still open (few).
    static let oldestUnreportedSQL = """
        SELECT (SELECT min(t.first_seen_at) FROM tokens t WHERE t.accepted_at IS NULL),
            (SELECT min(created) FROM (
                SELECT * FROM (SELECT t.token_created_at AS created FROM tokens t
                    WHERE t.report_queued_at IS NULL AND t.report_due_at IS NULL
                        AND \(ReportingPolicy.SQL.waitsQuietTime("t"))
                    ORDER BY t.token_created_at LIMIT 1) AS quiet
                UNION ALL
                SELECT * FROM (SELECT t.token_created_at AS created FROM tokens t
                    WHERE t.report_queued_at IS NULL AND t.report_due_at IS NOT NULL
                    ORDER BY t.token_created_at LIMIT 1) AS announced
                UNION ALL
                SELECT * FROM (SELECT t.token_created_at AS created FROM tokens t
                    WHERE t.report_queued_at IS NULL AND \(ReportingPolicy.SQL.isReportedAtExpiry("t"))
                    ORDER BY t.token_created_at, t.external_purchase_id LIMIT 1) AS custom_link
                UNION ALL
                SELECT t.token_created_at AS created FROM tokens t WHERE t.external_purchase_id IN (
                        SELECT r.external_purchase_id FROM reports r WHERE r.state = 'pending'
                        UNION SELECT r.external_purchase_id FROM reports r WHERE r.state = 'rejected')
                    AND t.accepted_at IS NULL
            ) AS unreported)
        """

    /// A report state outside the known ones, if any, each range read through `reports_due`.
    static let unknownStateSQL = """
        SELECT * FROM (SELECT state FROM reports WHERE state < 'accepted' LIMIT 1) AS unknown_1
        UNION ALL SELECT * FROM (SELECT state FROM reports WHERE state > 'accepted' AND state < 'pending' LIMIT 1) AS unknown_2
        UNION ALL SELECT * FROM (SELECT state FROM reports WHERE state > 'pending' AND state < 'rejected' LIMIT 1) AS unknown_3
        UNION ALL SELECT * FROM (SELECT state FROM reports WHERE state > 'rejected' LIMIT 1) AS unknown_4
        """

    // MARK: writes

    /// The `tokenCreationDate` of the oldest token without an accepted report: Apple's UNREPORTED notice counts
    /// from creation, not from when linkout first saw the token.
    public func oldestUnreportedCreation() throws(StorageError) -> Int64? {
        try reportSummary().oldestUnreportedCreation
    }

    /// Stores posted line items for a token; they wait for the next report.
    public func storeLineItems(
        _ items: [(lineItemId: String, body: String)],
        for externalPurchaseId: String,
        at: Int64
    ) throws(StorageError) {
        try database.writer.write {
            [dialect = database.dialect, regimes = database.commissionRegimes.current]
            connection throws(StorageError) in
            for item in items {
                try connection.query(
                    "INSERT INTO line_items (external_purchase_id, line_item_id, body, received_at) VALUES (?, ?, ?, ?)",
                    [.text(externalPurchaseId), .text(item.lineItemId), .text(item.body), .integer(at)]
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
            try MoneyRows.claimed(rows: lineItemRows, by: report.requestIdentifier, in: connection)
        }
    }

    /// A rejected report whose token's data changed: the new full body under the same requestIdentifier (Apple:
    /// "resubmit the full report using the same requestIdentifier"), pending again.
    public func reviseRejectedReport(
        _ requestIdentifier: String,
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
                [.text(body), .integer(now), .text(requestIdentifier)]
            )
            guard !rows.isEmpty else { throw StorageError(.conflict, "report is not rejected") }
            for row in lineItemRows {
                try connection.query(
                    "UPDATE line_items SET report_request_identifier = ? WHERE id = ?",
                    [.text(requestIdentifier), .integer(row)]
                )
            }
            try MoneyRows.claimed(rows: lineItemRows, by: requestIdentifier, in: connection)
        }
    }

    /// Records the outcome of a send by this instance. Dropped if another instance has leased the report since
    /// (this one's lease ended mid-send): the other's attempt is the one that counts.
    public func recordAttempt(_ requestIdentifier: String, _ attempt: ReportAttempt) throws(StorageError) {
        try database.writer.write { [instance] connection throws(StorageError) in
            let updated = try connection.query(
                """
                UPDATE reports SET state = ?, attempts = attempts + ?, last_attempt_at = ?, last_http_status = ?,
                    last_response = ?, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL,
                    accepted_at = CASE WHEN ? = 'accepted' THEN coalesce(accepted_at, ?) ELSE accepted_at END
                WHERE request_identifier = ? AND (lease_owner IS NULL OR lease_owner = ?)
                RETURNING external_purchase_id
                """,
                [
                    .text(attempt.state.rawValue), .integer(attempt.countsAsAttempt ? 1 : 0), .integer(attempt.at),
                    .optional(attempt.httpStatus),
                    .optional(attempt.response), .integer(attempt.nextAttemptAt), .text(attempt.state.rawValue),
                    .integer(attempt.at), .text(requestIdentifier), .text(instance),
                ]
            )
            // The day's count first: it sets the token's `accepted_at` only if no report of it was accepted before.
            if attempt.state == .accepted, let token = updated.first?.first?.text {
                try TokenDays.addAcceptedReport(for: token, at: attempt.at, into: connection)
            }
            if attempt.state == .accepted { try Self.markAccepted(requestIdentifier, at: attempt.at, connection) }
            // Apple's acceptance reaches the money rows in the same transaction.
            try MoneyRows.reportChanged(requestIdentifier, in: connection)
        }
    }

    /// Apple accepted the report: its token and the line items it carried (not those set aside) are accepted
    /// from now, as the monthly close counts them (`tokens.accepted_at`, `line_items.accepted_at`). Only when
    /// the report is accepted now: an attempt of another instance's lease was dropped above.
    static func markAccepted(_ requestIdentifier: String, at: Int64, _ connection: any SQLConnection)
        throws(StorageError)
    {
        guard
            let token = try connection.query(
                "SELECT external_purchase_id FROM reports WHERE request_identifier = ? AND state = 'accepted'",
                [.text(requestIdentifier)]
            ).first?.first?.text
        else { return }
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
            [.integer(at), .text(token), .text(requestIdentifier)]
        )
    }

    static func insert(_ report: StoredReport, into connection: any SQLConnection) throws(StorageError) {
        try connection.query(
            """
            INSERT INTO reports (request_identifier, external_purchase_id, environment, bundle_id, status, body, state,
                attempts, next_attempt_at, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(report.requestIdentifier), .text(report.externalPurchaseId), .text(report.environment.rawValue),
                .text(report.bundleId), .text(report.status.rawValue), .text(report.body), .text(report.state.rawValue),
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
            [.integer(report.createdAt), .text(report.externalPurchaseId)]
        )
    }
}
