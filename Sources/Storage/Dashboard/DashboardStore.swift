import Domain

/// The dashboard's reads. The SQL is kept to what SQLite and PostgreSQL both run: integer division for days,
/// `EXISTS` subqueries, `?` placeholders. The day divisor is written into the SQL rather than bound: PostgreSQL
/// would see two different parameters in the select list and the `GROUP BY` and refuse the grouping.
public struct DashboardStore: Sendable {
    let database: SQLDatabase

    /// Tokens first seen at or after `since`, counted per day, environment and source; days without tokens are
    /// left out. Whole days come from `token_days`; a day `since` cuts is counted through `tokens_first_seen`.
    public func dailyTokenCounts(since: Int64) throws(StorageError) -> [DailyTokenCount] {
        try database.readers.read { connection throws(StorageError) in
            let firstWholeDay = Self.firstWholeDay(since)
            var rows = try connection.query(
                "SELECT day, environment, source, tokens FROM token_days WHERE day >= ? ORDER BY 1, 2, 3",
                [.integer(firstWholeDay)]
            )
            if since < firstWholeDay * Milliseconds.day {
                rows =
                    try connection.query(
                        """
                        SELECT ?, environment, source, count(*) FROM tokens
                        WHERE first_seen_at >= ? AND first_seen_at < ? GROUP BY environment, source ORDER BY 2, 3
                        """,
                        [.integer(firstWholeDay - 1), .integer(since), .integer(firstWholeDay * Milliseconds.day)]
                    ) + rows
            }
            return try rows.filter { ($0[3].integer ?? 0) > 0 }.decoded { row throws(StorageError) in
                DailyTokenCount(
                    day: row[0].integer ?? 0,
                    environment: try row[1].closedSet("tokens.environment"),
                    source: try row[2].closedSet("tokens.source"),
                    count: row[3].integer ?? 0
                )
            }
        }
    }

    /// The first day that starts at or after `since` (days are `timestamp / day`, as in SQL).
    static func firstWholeDay(_ since: Int64) -> Int64 {
        let day = since / Milliseconds.day
        return day * Milliseconds.day < since ? day + 1 : day
    }

    /// The funnel of the tokens first seen at or after `since`: whole days from `token_days`, a day `since` cuts
    /// from its tokens (`tokens_first_seen`).
    public func funnel(since: Int64) throws(StorageError) -> Funnel {
        try database.readers.read { connection throws(StorageError) in
            let firstWholeDay = Self.firstWholeDay(since)
            var rows = try connection.query(
                """
                SELECT coalesce(sum(tokens), 0), coalesce(sum(checkouts), 0), coalesce(sum(payments), 0),
                    coalesce(sum(reported), 0)
                FROM token_days WHERE day >= ?
                """,
                [.integer(firstWholeDay)]
            )
            if since < firstWholeDay * Milliseconds.day {
                rows += try connection.query(
                    """
                    SELECT count(*),
                        coalesce(sum(CASE WHEN EXISTS (SELECT 1 FROM checkout_intents i
                            WHERE i.checkout_id = t.checkout_id) THEN 1 ELSE 0 END), 0),
                        coalesce(sum(CASE WHEN EXISTS (SELECT 1 FROM purchases p
                            WHERE p.external_purchase_id = t.external_purchase_id) THEN 1 ELSE 0 END), 0),
                        coalesce(sum(CASE WHEN t.accepted_at IS NOT NULL THEN 1 ELSE 0 END), 0)
                    FROM tokens t WHERE t.first_seen_at >= ? AND t.first_seen_at < ?
                    """,
                    [.integer(since), .integer(firstWholeDay * Milliseconds.day)]
                )
            }
            let sums = rows.reduce(into: [Int64](repeating: 0, count: 4)) { sums, row in
                for index in 0..<4 { sums[index] += row[index].integer ?? 0 }
            }
            return Funnel(tokens: sums[0], checkouts: sums[1], payments: sums[2], reported: sums[3])
        }
    }

    /// Reports Apple refused, or that failed at least once and wait for a retry; most recent attempt first.
    public func failingReports(limit: Int) throws(StorageError) -> [StoredReport] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(ReportStore.reportColumns) FROM reports
                WHERE state = 'rejected' OR (state = 'pending' AND attempts > 0)
                ORDER BY coalesce(last_attempt_at, created_at) DESC, request_identifier LIMIT ?
                """,
                [.integer(Int64(limit))]
            ).decoded(ReportStore.storedReport)
        }
    }

    /// Webhook deliveries given up on, or that failed at least once and wait for a retry; most recent first.
    public func failingWebhooks(limit: Int) throws(StorageError) -> [WebhookDelivery] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(EntitlementStore.webhookColumns) FROM webhook_deliveries
                WHERE state = 'failed' OR (state = 'pending' AND attempts > 0)
                ORDER BY coalesce(last_attempt_at, created_at) DESC, event_id LIMIT ?
                """,
                [.integer(Int64(limit))]
            ).decoded(EntitlementStore.webhook)
        }
    }
}
