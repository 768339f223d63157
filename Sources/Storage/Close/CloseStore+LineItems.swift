public import Domain

/// The close's line items, one per line item as Apple sees it (Apple's "Reporting corrections": "Apple uses only
/// the most recent version"), as the money view and the reconciliation export count them: a line item's money row (its
/// latest version not set aside) is accepted once the report carrying that version was accepted, and outstanding until
/// then, in the state of that version. A restatement or a retraction is the same line item again, outstanding
/// until Apple accepts it, never a second one. A line item with a version Apple set aside and nobody corrected yet
/// is outstanding as `needs_correction`, whatever its earlier versions; one with only such versions has no money
/// row and is counted from `line_items`. The month's money rows are counted from `money_line_items_close` alone;
/// only the outstanding ones are looked up.
extension CloseStore {
    /// SQL naming the state of a line item whose version `l` Apple has not accepted, its report (if any) in `r`.
    static let versionState = """
        CASE WHEN l.held_since IS NOT NULL THEN 'held'
            WHEN l.correction IS NOT NULL THEN 'needs_correction'
            WHEN r.state = 'rejected' THEN 'rejected'
            WHEN r.state = 'pending' AND r.attempts > 0 THEN 'retrying'
            WHEN r.state = 'pending' THEN 'pending'
            ELSE 'unreported' END
        """

    /// SQL naming the state of the money row `m` not accepted (its version in `l`, its report in `r`): a later
    /// version set aside and not corrected yet comes first, then the state of the version that counts.
    static let moneyRowState = """
        CASE WHEN EXISTS (SELECT 1 FROM line_items c JOIN tokens ct ON ct.external_purchase_id = c.external_purchase_id
                WHERE c.line_item_id = m.line_item_id AND ct.bundle_id = m.bundle_id AND ct.environment = m.environment
                  AND c.correction IS NOT NULL AND c.corrected_at IS NULL) THEN 'needs_correction'
            ELSE \(versionState) END
        """

    /// The month's money rows of an environment not accepted. Parameters: environment, from, until.
    static let openMoneyRows = """
        FROM money_line_items m JOIN line_items l ON l.id = m.line_item_row
        LEFT JOIN reports r ON r.request_identifier = l.report_request_identifier
        WHERE m.environment = ? AND m.creation_date >= ? AND m.creation_date < ? AND m.accepted_at IS NULL
        """

    /// SQL saying whether the line item of version `l` (token `t`) has a money row dated in the month.
    /// Parameters: from, until.
    static let hasMoneyRowInMonth = """
        EXISTS (SELECT 1 FROM money_line_items n WHERE n.environment = t.environment AND n.bundle_id = t.bundle_id
            AND n.line_item_id = l.line_item_id AND n.creation_date >= ? AND n.creation_date < ?)
        """

    /// Versions dated in the month, set aside by Apple and not corrected yet, whose line item is not among the
    /// open money rows (its money row, if any, is accepted or of another month): the newest such version of each
    /// line item of a token. Parameters: from, until, from, until.
    static func setAsideVersions(_ environment: Environment) -> String {
        """
        FROM line_items l JOIN tokens t ON t.external_purchase_id = l.external_purchase_id
        LEFT JOIN reports r ON r.request_identifier = l.report_request_identifier
        WHERE l.creation_date >= ? AND l.creation_date < ? AND l.accepted_at IS NULL AND \(sandboxTest(environment))
          AND l.correction IS NOT NULL AND l.corrected_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM line_items s WHERE s.external_purchase_id = l.external_purchase_id
                AND s.line_item_id = l.line_item_id AND s.id > l.id AND s.correction IS NOT NULL
                AND s.corrected_at IS NULL)
          AND NOT EXISTS (SELECT 1 FROM money_line_items o WHERE o.environment = t.environment
                AND o.bundle_id = t.bundle_id AND o.line_item_id = l.line_item_id AND o.creation_date >= ?
                AND o.creation_date < ? AND o.accepted_at IS NULL)
        """
    }

    /// The money rows of an environment dated in the month. Parameters: environment, from, until.
    static let moneyRowsInMonth = """
        SELECT count(*) FROM money_line_items WHERE environment = ? AND creation_date >= ? AND creation_date < ?
        """

    /// The outstanding line items with their state, whether they are already counted among the month's money
    /// rows (0) or not (1), and what the list shows. Parameters: `openItemsParameters`.
    static func openItems(_ environment: Environment) -> String {
        """
        SELECT m.external_purchase_id AS external_purchase_id, m.line_item_id AS line_item_id,
            m.creation_date AS creation_date, \(moneyRowState) AS state, 0 AS uncounted,
            r.request_identifier AS request_identifier, r.next_attempt_at AS next_attempt_at,
            r.last_http_status AS last_http_status, l.id AS row_id
        \(openMoneyRows)
        UNION ALL
        SELECT l.external_purchase_id, l.line_item_id, l.creation_date, 'needs_correction',
            CASE WHEN \(hasMoneyRowInMonth) THEN 0 ELSE 1 END, r.request_identifier, r.next_attempt_at,
            r.last_http_status, l.id
        \(setAsideVersions(environment))
        """
    }

    static func openItemsParameters(_ environment: Environment, from: Int64, until: Int64) -> [SQLValue] {
        let range: [SQLValue] = [.integer(from), .integer(until)]
        return [.text(environment.rawValue)] + range + range + range + range
    }

    /// The month's line items (one per line item as Apple sees it), and those not accepted by state.
    public func lineItemCounts(environment: Environment, from: Int64, until: Int64) throws(StorageError)
        -> CloseCounts
    {
        try database.readers.readSnapshot { connection throws(StorageError) in
            var counts = CloseCounts(
                total: try connection.query(
                    Self.moneyRowsInMonth,
                    [.text(environment.rawValue), .integer(from), .integer(until)]
                ).first?.first?.integer ?? 0
            )
            let rows = try connection.query(
                """
                SELECT state, count(*), sum(uncounted) FROM (\(Self.openItems(environment))) AS open_items
                GROUP BY state
                """,
                Self.openItemsParameters(environment, from: from, until: until)
            )
            for row in rows {
                counts.outstanding[try row[0].closedSet("close.state") as CloseItem.State] = row[1].integer ?? 0
                counts.total += row[2].integer ?? 0
            }
            return counts
        }
    }

    /// The month's line items not accepted, oldest first, at most `limit`.
    public func outstandingLineItems(environment: Environment, from: Int64, until: Int64, limit: Int)
        throws(StorageError) -> [CloseItem]
    {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT external_purchase_id, line_item_id, creation_date, state, request_identifier, next_attempt_at,
                    last_http_status
                FROM (\(Self.openItems(environment))) AS open_items ORDER BY creation_date, row_id LIMIT ?
                """,
                Self.openItemsParameters(environment, from: from, until: until) + [.integer(Int64(limit))]
            ).decoded { row throws(StorageError) in
                var item = CloseItem(
                    kind: .lineItem,
                    externalPurchaseId: row[0].id() ?? "",
                    lineItemId: row[1].id(),
                    date: row[2].integer ?? 0,
                    state: try row[3].closedSet("close.state")
                )
                item.requestIdentifier = row[4].id()
                item.nextAttemptAt = row[5].integer
                item.lastHTTPStatus = row[6].integer
                return item
            }
        }
    }
}
