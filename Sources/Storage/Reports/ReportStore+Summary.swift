public import Domain

/// The outbox in figures: reports by state and the oldest token without an accepted report.
extension ReportStore {
    /// Reports by state, and of the tokens without an accepted report the oldest first-seen time, the oldest
    /// `tokenCreationDate`, and the first moment Apple's `UNREPORTED` notice comes for one of them. Read from
    /// what is open, never from every report or token: pending and rejected reports are counted through their
    /// indexes, accepted ones are the rest of `ledger_counts`' reports; the tokens without an accepted report are
    /// those without any (`tokens_awaiting_*`) and those whose every report is open.
    public func reportSummary() throws(StorageError) -> (
        counts: [ReportState: Int64], oldestUnreported: Int64?, oldestUnreportedCreation: Int64?,
        firstUnreportedNotice: Int64?
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
            return (counts, oldest?[0].integer, oldest?[1].integer, oldest?[2].integer)
        }
    }

    /// The oldest first-seen time and `tokenCreationDate` of the tokens without an accepted report, and the
    /// first moment Apple's notice comes for one, each read from an index's first entry: `tokens_unaccepted` for
    /// the first; for the others the first of each of the planner's indexes of tokens without a report (the
    /// custom-link tokens both by creation and by expiry, when their notice comes), and the tokens whose every
    /// report is still open (few). Each row is one unreported token, so the least of a column over them all is
    /// the least over every unreported token. A token Apple announced is taken by its creation, as its index
    /// orders it.
    static let oldestUnreportedSQL = """
        SELECT (SELECT min(t.first_seen_at) FROM tokens t WHERE t.accepted_at IS NULL), min(created), min(notice)
        FROM (
            SELECT * FROM (SELECT \(unreportedColumns) FROM tokens t
                WHERE t.report_queued_at IS NULL AND t.report_due_at IS NULL
                    AND \(ReportingPolicy.SQL.waitsQuietTime("t"))
                ORDER BY t.token_created_at LIMIT 1) AS quiet
            UNION ALL
            SELECT * FROM (SELECT \(unreportedColumns) FROM tokens t
                WHERE t.report_queued_at IS NULL AND t.report_due_at IS NOT NULL
                ORDER BY t.token_created_at LIMIT 1) AS announced
            UNION ALL
            SELECT * FROM (SELECT \(unreportedColumns) FROM tokens t
                WHERE t.report_queued_at IS NULL AND \(ReportingPolicy.SQL.isReportedAtExpiry("t"))
                ORDER BY t.token_created_at, t.external_purchase_id LIMIT 1) AS custom_link
            UNION ALL
            SELECT * FROM (SELECT \(unreportedColumns) FROM tokens t
                WHERE t.report_queued_at IS NULL AND t.report_due_at IS NULL
                    AND \(ReportingPolicy.SQL.isReportedAtExpiry("t"))
                ORDER BY t.token_expires_at LIMIT 1) AS at_expiry
            UNION ALL
            SELECT \(unreportedColumns) FROM tokens t WHERE t.external_purchase_id IN (
                    SELECT r.external_purchase_id FROM reports r WHERE r.state = 'pending'
                    UNION SELECT r.external_purchase_id FROM reports r WHERE r.state = 'rejected')
                AND t.accepted_at IS NULL
        ) AS unreported
        """

    /// An unreported token's creation and the moment of Apple's notice for it.
    private static let unreportedColumns =
        "t.token_created_at AS created, \(ReportingPolicy.SQL.unreportedNoticeAt("t")) AS notice"

    /// A report state outside the known ones, if any, each range read through `reports_due`.
    static let unknownStateSQL = """
        SELECT * FROM (SELECT state FROM reports WHERE state < 'accepted' LIMIT 1) AS unknown_1
        UNION ALL SELECT * FROM (SELECT state FROM reports WHERE state > 'accepted' AND state < 'pending' LIMIT 1) AS unknown_2
        UNION ALL SELECT * FROM (SELECT state FROM reports WHERE state > 'pending' AND state < 'rejected' LIMIT 1) AS unknown_3
        UNION ALL SELECT * FROM (SELECT state FROM reports WHERE state > 'rejected' LIMIT 1) AS unknown_4
        """
}
