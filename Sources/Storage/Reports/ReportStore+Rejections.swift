public import Domain

/// Apple's rejections (Apple: "SendReportErrorResponse") in the outbox: recording what a `400` changed, the rejected
/// reports that can go again, the tokens that need a person, and the operator's corrections.
extension ReportStore {
    /// Records a send answered `400` and, in the same transaction, the report's new body and status and the line
    /// items Apple named, set aside with its message. Nothing changes if another instance leased the report since.
    public func recordRejection(
        _ requestIdentifier: RequestIdentifier,
        _ attempt: ReportAttempt,
        rewrite: ReportRewrite
    ) throws(StorageError) {
        try database.writer.write {
            [instance, dialect = database.dialect, regimes = database.commissionRegimes.current]
            connection throws(StorageError) in
            let updated = try connection.query(
                """
                UPDATE reports SET state = ?, attempts = attempts + ?, last_attempt_at = ?, last_http_status = ?,
                    last_response = ?, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL,
                    body = coalesce(?, body), status = coalesce(?, status)
                WHERE request_identifier = ? AND (lease_owner IS NULL OR lease_owner = ?) RETURNING 1
                """,
                [
                    .text(attempt.state.rawValue), .integer(attempt.countsAsAttempt ? 1 : 0), .integer(attempt.at),
                    .optional(attempt.httpStatus), .optional(attempt.response), .integer(attempt.nextAttemptAt),
                    .optional(rewrite.body), .optional(rewrite.status?.rawValue), .id(requestIdentifier),
                    .text(instance),
                ]
            )
            guard !updated.isEmpty else { return }
            for (lineItemId, message) in rewrite.setAside.sorted(by: { $0.key < $1.key }) {
                try connection.query(
                    """
                    UPDATE line_items SET correction = ?
                    WHERE report_request_identifier = ? AND line_item_id = ? AND correction IS NULL
                    """,
                    [.text(message), .id(requestIdentifier), .text(lineItemId)]
                )
            }
            // Versions set aside are not what Apple holds: the money rows go back to the latest other version.
            try MoneyRows.refreshReport(requestIdentifier, in: connection, dialect: dialect, regimes: regimes)
        }
    }

    /// Sets aside line items no report carries yet, each with its note (the rule Apple would refuse it by and the
    /// action that settles it), as a rejection naming them would: the token's other items are reported without
    /// them. Returns how many were set aside (a row sent or set aside meanwhile is left as it is).
    @discardableResult
    public func setAsideUnsent(_ notes: [(rowId: Int64, note: String)]) throws(StorageError) -> Int {
        guard !notes.isEmpty else { return 0 }
        return try database.writer.write {
            [dialect = database.dialect, regimes = database.commissionRegimes.current]
            connection throws(StorageError) in
            var count = 0
            for (rowId, note) in notes {
                let set = try connection.query(
                    """
                    UPDATE line_items SET correction = ?
                    WHERE id = ? AND report_request_identifier IS NULL AND correction IS NULL
                    RETURNING external_purchase_id, line_item_id
                    """,
                    [.text(note), .integer(rowId)]
                )
                if try Self.refreshMoneyRows(of: set.first, in: connection, dialect: dialect, regimes: regimes) {
                    count += 1
                }
            }
            return count
        }
    }

    /// Rewrites a line item Apple does not hold and nothing set aside, in place, when its body is still `body`: one
    /// no report carries yet, or one the report `rejected` carried, when Apple refused that report (a refund's net
    /// taken again before it is sent, or sent again). False when the row was sent otherwise, set aside or changed
    /// meanwhile, and is left as it is.
    public func rewriteUnsent(
        rowId: Int64,
        from body: String,
        to replacement: String,
        orIn rejected: RequestIdentifier? = nil
    ) throws(StorageError) -> Bool {
        try database.writer.write {
            [dialect = database.dialect, regimes = database.commissionRegimes.current]
            connection throws(StorageError) in
            let rewritten = try connection.query(
                """
                UPDATE line_items SET body = ?
                WHERE id = ? AND body = ? AND correction IS NULL
                  AND (report_request_identifier IS NULL OR report_request_identifier IN (
                    SELECT request_identifier FROM reports WHERE request_identifier = ? AND state = ?))
                RETURNING external_purchase_id, line_item_id
                """,
                [
                    .text(replacement), .integer(rowId), .text(body), .optional(rejected?.rawValue),
                    .text(ReportState.rejected.rawValue),
                ]
            )
            return try Self.refreshMoneyRows(of: rewritten.first, in: connection, dialect: dialect, regimes: regimes)
        }
    }

    /// After a change to the line item a statement returned (`external_purchase_id, line_item_id`), its money rows
    /// follow what now stands of it; false when the statement changed no row.
    private static func refreshMoneyRows(
        of row: [SQLValue]?,
        in connection: any SQLConnection,
        dialect: SQLDialect,
        regimes: [CommissionRegime]
    ) throws(StorageError) -> Bool {
        guard let row, let token: ExternalPurchaseID = row[0].id(), let lineItemId: LineItemID = row[1].id() else {
            return false
        }
        try MoneyRows.refresh(
            lineItemId: lineItemId,
            externalPurchaseId: token,
            in: connection,
            dialect: dialect,
            regimes: regimes
        )
        return true
    }

    /// Rejected reports whose token has new line items, in key order after `after` (keyset paging).
    public func rejectedReportsWithNewLineItems(after: RequestIdentifier?, limit: Int) throws(StorageError)
        -> [StoredReport]
    {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.reportColumns) FROM reports r
                WHERE r.state = 'rejected' AND r.request_identifier > ?
                  AND EXISTS (SELECT 1 FROM line_items l WHERE l.external_purchase_id = r.external_purchase_id
                        AND l.report_request_identifier IS NULL AND l.correction IS NULL)
                ORDER BY r.request_identifier LIMIT ?
                """,
                [.text(after?.rawValue ?? ""), .integer(Int64(limit))]
            ).decoded(Self.storedReport)
        }
    }

    /// The token's rejected report goes again as it is; false if it has none.
    public func reviveRejectedReport(for externalPurchaseId: ExternalPurchaseID, now: Int64) throws(StorageError)
        -> Bool
    {
        try database.writer.write { connection throws(StorageError) in
            let revived =
                !(try connection.query(
                    """
                    UPDATE reports SET state = 'pending', next_attempt_at = ?
                    WHERE external_purchase_id = ? AND state = 'rejected' RETURNING 1
                    """,
                    [.integer(now), .id(externalPurchaseId)]
                )).isEmpty
            if revived { try MoneyRows.reportsChanged(forToken: externalPurchaseId, in: connection) }
            return revived
        }
    }

    /// New content for a rejected report under its `requestIdentifier`; the line items it carried leave it.
    public func replaceRejectedReport(
        _ requestIdentifier: RequestIdentifier,
        status: ReportStatus,
        body: String,
        note: String,
        now: Int64
    ) throws(StorageError) -> Bool {
        try database.writer.write {
            [dialect = database.dialect, regimes = database.commissionRegimes.current]
            connection throws(StorageError) in
            let updated = try connection.query(
                """
                UPDATE reports SET status = ?, body = ?, state = 'pending', next_attempt_at = ?
                WHERE request_identifier = ? AND state = 'rejected' RETURNING 1
                """,
                [.text(status.rawValue), .text(body), .integer(now), .id(requestIdentifier)]
            )
            guard !updated.isEmpty else { return false }
            try connection.query(
                """
                UPDATE line_items SET correction = coalesce(correction, ?), corrected_at = coalesce(corrected_at, ?)
                WHERE report_request_identifier = ?
                """,
                [.text(note), .integer(now), .id(requestIdentifier)]
            )
            try MoneyRows.refreshReport(requestIdentifier, in: connection, dialect: dialect, regimes: regimes)
            return true
        }
    }

    /// Resolves a line item's set-aside versions and stores `replacement`, if any, for the next report.
    public func correctLineItem(
        _ lineItemId: LineItemID,
        of externalPurchaseId: ExternalPurchaseID,
        replacement: String?,
        now: Int64
    ) throws(StorageError) -> Int {
        try database.writer.write {
            [dialect = database.dialect, regimes = database.commissionRegimes.current]
            connection throws(StorageError) in
            try Self.correct(lineItemId, of: externalPurchaseId, replacement, now, connection, dialect, regimes)
        }
    }

    /// `correctLineItem` for a restatement: nil, with nothing written, when the version that stands (not set
    /// aside) is `replacement` already. Decided in the transaction that writes, and across instances one at a
    /// time: two identical restatements at once each found the other not yet written, and both went to Apple.
    public func restateLineItem(
        _ lineItemId: LineItemID,
        of externalPurchaseId: ExternalPurchaseID,
        replacement: String,
        now: Int64
    ) throws(StorageError) -> Int? {
        try database.writer.write {
            [dialect = database.dialect, regimes = database.commissionRegimes.current]
            connection throws(StorageError) in
            if let serialize = dialect.serializeOnKey {
                try connection.query(
                    serialize,
                    [.text("restate\u{0}" + externalPurchaseId.rawValue + "\u{0}" + lineItemId.rawValue)]
                )
            }
            let standing = try connection.query(
                """
                SELECT body, correction FROM line_items WHERE external_purchase_id = ? AND line_item_id = ?
                ORDER BY id DESC LIMIT 1
                """,
                [.id(externalPurchaseId), .id(lineItemId)]
            ).first
            if let standing, standing[1].text == nil, standing[0].text == replacement { return nil }
            return try Self.correct(lineItemId, of: externalPurchaseId, replacement, now, connection, dialect, regimes)
        }
    }

    private static func correct(
        _ lineItemId: LineItemID,
        of externalPurchaseId: ExternalPurchaseID,
        _ replacement: String?,
        _ now: Int64,
        _ connection: any SQLConnection,
        _ dialect: SQLDialect,
        _ regimes: [CommissionRegime]
    ) throws(StorageError) -> Int {
        let resolved = try connection.query(
            """
            UPDATE line_items SET corrected_at = ?
            WHERE external_purchase_id = ? AND line_item_id = ? AND correction IS NOT NULL
              AND corrected_at IS NULL RETURNING 1
            """,
            [.integer(now), .id(externalPurchaseId), .id(lineItemId)]
        ).count
        if let replacement {
            try connection.query(
                "INSERT INTO line_items (external_purchase_id, line_item_id, body, received_at) VALUES (?, ?, ?, ?)",
                [.id(externalPurchaseId), .id(lineItemId), .text(replacement), .integer(now)]
            )
        }
        try MoneyRows.refresh(
            lineItemId: lineItemId,
            externalPurchaseId: externalPurchaseId,
            in: connection,
            dialect: dialect,
            regimes: regimes
        )
        return resolved
    }

    /// What stands behind a token that needs a person, as SQL over its `tokens` row `t`: the payment events put
    /// off behind a hold on it (`PaymentStore.deferBehindHold`) and not made into line items yet, and whether Apple
    /// accepted a `LINE_ITEM` report of it.
    static let attentionFacts = """
        (SELECT count(*) FROM payment_events e WHERE e.held_token = t.external_purchase_id
            AND e.held_reason IS NULL AND e.processed_at IS NULL),
        CASE WHEN EXISTS (SELECT 1 FROM reports a WHERE a.external_purchase_id = t.external_purchase_id
            AND a.state = 'accepted' AND a.status = '\(ReportStatus.lineItem.rawValue)') THEN 1 ELSE 0 END
        """

    /// Tokens that need a person, oldest token first; `offset` of them skipped (paging).
    public func needingAttention(limit: Int, offset: Int = 0) throws(StorageError) -> [AttentionEntry] {
        try database.readers.read { connection throws(StorageError) in
            let tokens = try connection.query(
                """
                SELECT t.external_purchase_id, t.token_created_at, t.token_expires_at, \(Self.attentionFacts)
                FROM tokens t
                WHERE t.external_purchase_id IN (
                    SELECT r.external_purchase_id FROM reports r WHERE r.state = 'rejected'
                    UNION ALL
                    SELECT l.external_purchase_id FROM line_items l
                    WHERE l.correction IS NOT NULL AND l.corrected_at IS NULL)
                ORDER BY t.token_created_at, t.external_purchase_id LIMIT ? OFFSET ?
                """,
                [.integer(Int64(limit)), .integer(Int64(offset))]
            )
            var entries: [AttentionEntry] = []
            for row in tokens {
                let id: ExternalPurchaseID = row[0].id() ?? ""
                let report = try connection.query(
                    "SELECT \(Self.reportColumns) FROM reports WHERE external_purchase_id = ? AND state = 'rejected'",
                    [.id(id)]
                ).firstDecoded(Self.storedReport)
                let items = try connection.query(
                    """
                    SELECT \(Self.lineItemColumns) FROM line_items
                    WHERE external_purchase_id = ? AND correction IS NOT NULL AND corrected_at IS NULL ORDER BY id
                    """,
                    [.id(id)]
                ).decoded(Self.storedLineItem)
                entries.append(
                    AttentionEntry(
                        externalPurchaseId: id,
                        tokenCreationDate: row[1].integer ?? 0,
                        tokenExpirationDate: row[2].integer,
                        report: report,
                        lineItems: items,
                        waitingPaymentEvents: row[3].integer ?? 0,
                        appleHoldsLineItems: row[4].integer == 1
                    )
                )
            }
            return entries
        }
    }

    /// `attentionFacts` of one token: the payment events waiting behind it, and whether Apple holds line items of
    /// it (both nothing for a token the ledger does not know).
    public func attentionFacts(of externalPurchaseId: ExternalPurchaseID) throws(StorageError) -> (
        waitingPaymentEvents: Int64, appleHoldsLineItems: Bool
    ) {
        try database.readers.read { connection throws(StorageError) in
            let row = try connection.query(
                "SELECT \(Self.attentionFacts) FROM tokens t WHERE t.external_purchase_id = ?",
                [.id(externalPurchaseId)]
            ).first
            return (row?[0].integer ?? 0, row?[1].integer == 1)
        }
    }

    public func attentionCount() throws(StorageError) -> Int64 {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT count(*) FROM (
                    SELECT external_purchase_id FROM reports WHERE state = 'rejected'
                    UNION
                    SELECT external_purchase_id FROM line_items WHERE correction IS NOT NULL AND corrected_at IS NULL
                ) AS attention
                """
            ).first?[0].integer ?? 0
        }
    }
}
