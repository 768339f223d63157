import Domain

/// The dashboard's reads. The SQL is kept to what SQLite and PostgreSQL both run: integer division for days,
/// `EXISTS` subqueries, `?` placeholders. The day divisor is written into the SQL rather than bound: PostgreSQL
/// would see two different parameters in the select list and the `GROUP BY` and refuse the grouping.
public struct DashboardStore: Sendable {
    let database: SQLDatabase

    /// Tokens first seen at or after `since`, counted per day, environment and source; days without tokens are
    /// left out.
    public func dailyTokenCounts(since: Int64) throws(StorageError) -> [DailyTokenCount] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT first_seen_at / \(Milliseconds.day), environment, source, count(*) FROM tokens
                WHERE first_seen_at >= ? GROUP BY first_seen_at / \(Milliseconds.day), environment, source
                ORDER BY 1, 2, 3
                """,
                [.integer(since)]
            ).decoded { row throws(StorageError) in
                DailyTokenCount(
                    day: row[0].integer ?? 0,
                    environment: try row[1].closedSet("tokens.environment"),
                    source: try row[2].closedSet("tokens.source"),
                    count: row[3].integer ?? 0
                )
            }
        }
    }

    /// The funnel of the tokens first seen at or after `since`.
    public func funnel(since: Int64) throws(StorageError) -> Funnel {
        try database.readers.read { connection throws(StorageError) in
            let row = try connection.query(
                """
                SELECT count(*),
                    coalesce(sum(CASE WHEN EXISTS (SELECT 1 FROM checkout_intents i
                        WHERE i.checkout_id = t.checkout_id) THEN 1 ELSE 0 END), 0),
                    coalesce(sum(CASE WHEN EXISTS (SELECT 1 FROM purchases p
                        WHERE p.external_purchase_id = t.external_purchase_id) THEN 1 ELSE 0 END), 0),
                    coalesce(sum(CASE WHEN EXISTS (SELECT 1 FROM reports r
                        WHERE r.external_purchase_id = t.external_purchase_id AND r.state = 'accepted')
                        THEN 1 ELSE 0 END), 0)
                FROM tokens t WHERE t.first_seen_at >= ?
                """,
                [.integer(since)]
            ).first
            return Funnel(
                tokens: row?[0].integer ?? 0,
                checkouts: row?[1].integer ?? 0,
                payments: row?[2].integer ?? 0,
                reported: row?[3].integer ?? 0
            )
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
