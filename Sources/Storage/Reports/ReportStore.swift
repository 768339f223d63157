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
            requestIdentifier: row[0].id() ?? "",
            externalPurchaseId: row[1].id() ?? "",
            environment: try row[2].closedSet("reports.environment"),
            bundleId: row[3].id() ?? "",
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
            externalPurchaseId: row[1].id() ?? "",
            lineItemId: row[2].id() ?? "",
            body: row[3].text ?? "",
            receivedAt: row[4].integer ?? 0,
            reportRequestIdentifier: row[5].id(),
            awaitingTokenSince: row[6].integer,
            correction: row[7].text,
            correctedAt: row[8].integer
        )
    }

    // MARK: reads

    /// A token's posted line items, in the order they arrived.
    public func lineItems(for externalPurchaseId: ExternalPurchaseID) throws(StorageError) -> [StoredLineItem] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.lineItemColumns)
                FROM line_items WHERE external_purchase_id = ? AND held_since IS NULL ORDER BY id
                """,
                [.id(externalPurchaseId)]
            ).decoded(Self.storedLineItem)
        }
    }

    /// Every version of the line item `lineItemId`, on whichever token it went, oldest first.
    public func lineItemVersions(_ lineItemId: LineItemID) throws(StorageError) -> [StoredLineItem] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.lineItemColumns) FROM line_items WHERE line_item_id = ? ORDER BY id",
                [.id(lineItemId)]
            ).decoded(Self.storedLineItem)
        }
    }

    /// Every line item of the purchase `lineItemId` belongs to (buy, renewals, and what refers to them), on
    /// whichever token each went, held ones included.
    public func purchaseLineItems(containing lineItemId: LineItemID) throws(StorageError) -> [StoredLineItem] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.lineItemColumns) FROM line_items WHERE line_item_id = ? OR line_item_id IN (
                    SELECT c.line_item_id FROM purchase_charges c WHERE c.purchase_id IN (
                        SELECT p.purchase_id FROM purchase_charges p WHERE p.line_item_id = ?))
                ORDER BY id
                """,
                [.id(lineItemId), .id(lineItemId)]
            ).decoded(Self.storedLineItem)
        }
    }

    /// Line items awaiting a token (none of the customer's was active at their `creationDate`), oldest first, after
    /// the row `after` (keyset paging: the next page starts after the last row of this one).
    public func lineItemsAwaitingToken(after rowId: Int64 = 0, limit: Int) throws(StorageError) -> [StoredLineItem] {
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

    /// How many line items await a token.
    public func lineItemsAwaitingTokenCount() throws(StorageError) -> Int64 {
        try database.readers.read { connection throws(StorageError) in
            try connection.query("SELECT count(*) FROM line_items WHERE held_since IS NOT NULL").first?.first?.integer
                ?? 0
        }
    }

    /// Moves a line item awaiting a token onto one; false when it was placed already.
    public func placeLineItemAwaitingToken(_ rowId: Int64, on externalPurchaseId: ExternalPurchaseID)
        throws(StorageError)
        -> Bool
    {
        try database.writer.write {
            [dialect = database.dialect, regimes = database.commissionRegimes.current]
            connection throws(StorageError) in
            guard
                let placed = try connection.query(
                    """
                    UPDATE line_items SET external_purchase_id = ?, held_since = NULL
                    WHERE id = ? AND held_since IS NOT NULL RETURNING line_item_id
                    """,
                    [.id(externalPurchaseId), .integer(rowId)]
                ).first
            else { return false }
            try MoneyRows.refresh(
                lineItemId: placed[0].id() ?? "",
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
    public func activeCustomerTokens(bundleId: BundleID, environment: Environment, accounts: [String], at: Int64)
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
                    .id(bundleId), .text(environment.rawValue), .integer(at), .integer(at),
                ]
            ).decoded(TokenStore.storedToken)
        }
    }

    /// A token's reports, oldest first.
    public func reports(for externalPurchaseId: ExternalPurchaseID) throws(StorageError) -> [StoredReport] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.reportColumns) FROM reports WHERE external_purchase_id = ? ORDER BY created_at",
                [.id(externalPurchaseId)]
            ).decoded(Self.storedReport)
        }
    }

    public func report(_ requestIdentifier: RequestIdentifier) throws(StorageError) -> StoredReport? {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.reportColumns) FROM reports WHERE request_identifier = ?",
                [.id(requestIdentifier)]
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
    public func dueReports(now: Int64, limit: Int, scopes: ScopeFilter = .all) throws(StorageError) -> [StoredReport] {
        let (sql, parameters) = scopes.predicate(table: "reports")
        return try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.reportColumns) FROM reports WHERE state = 'pending' AND next_attempt_at <= ? \(sql)
                ORDER BY next_attempt_at LIMIT ?
                """,
                [.integer(now)] + parameters + [.integer(Int64(limit))]
            ).decoded(Self.storedReport)
        }
    }
}
