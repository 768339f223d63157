/// Outbox leases (see `Lease`): with several instances on one database, each due report or webhook delivery is
/// claimed by one of them, sent, and its attempt recorded (which ends the lease).
extension SQLEngine {
    /// Claims due reports for `lease.owner` until `lease.until`: pending, due, and not leased (or the lease
    /// ended). Claimed reports come back, oldest due first; until their attempt is recorded no claim returns
    /// them again, this instance's included.
    func claimDueReports(now: Int64, limit: Int, lease: Lease) throws(StorageError) -> [StoredReport] {
        try claim(
            from: "reports",
            key: "request_identifier",
            columns: Self.reportColumns,
            now: now,
            limit: limit,
            lease: lease
        )
        .map(Self.storedReport).sorted { $0.nextAttemptAt < $1.nextAttemptAt }
    }

    /// Claims due deliveries as `claimDueReports` does, in each purchase's order (a delivery waits for the
    /// purchase's earlier ones).
    func claimDueWebhooks(now: Int64, limit: Int, lease: Lease) throws(StorageError) -> [WebhookDelivery] {
        try claim(
            from: "webhook_deliveries",
            key: "event_id",
            columns: Self.webhookColumns,
            now: now,
            limit: limit,
            lease: lease,
            inOrder: """
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.purchase_id = c.purchase_id
                    AND e.state = 'pending' AND e.sequence < c.sequence)
                """
        ).map(Self.webhook).sorted { ($0.nextAttemptAt, $0.sequence) < ($1.nextAttemptAt, $1.sequence) }
    }

    /// One claim: the due, unleased rows of `table` (the candidates `c`, narrowed by `inOrder`), oldest due
    /// first, leased in the same statement; other instances skip rows a claim has locked (PostgreSQL).
    private func claim(
        from table: String,
        key: String,
        columns: String,
        now: Int64,
        limit: Int,
        lease: Lease,
        inOrder: String = ""
    ) throws(StorageError) -> [[SQLValue]] {
        try writer.write { [dialect] connection throws(StorageError) in
            try connection.query(
                """
                UPDATE \(table) SET lease_owner = ?, lease_until = ?
                WHERE \(key) IN (
                    SELECT c.\(key) FROM \(table) c
                    WHERE c.state = 'pending' AND c.next_attempt_at <= ?
                      AND (c.lease_until IS NULL OR c.lease_until <= ?)
                      \(inOrder)
                    ORDER BY c.next_attempt_at LIMIT ?\(dialect.skipLocked))
                RETURNING \(columns)
                """,
                [.text(lease.owner), .integer(lease.until), .integer(now), .integer(now), .integer(Int64(limit))]
            )
        }
    }

    /// Ends this instance's claims on reports it will not send after all.
    func releaseReportClaims(_ requestIdentifiers: [String], owner: String) throws(StorageError) {
        try writer.write { connection throws(StorageError) in
            for identifier in requestIdentifiers {
                try connection.query(
                    "UPDATE reports SET lease_owner = NULL, lease_until = NULL WHERE request_identifier = ? AND lease_owner = ?",
                    [.text(identifier), .text(owner)]
                )
            }
        }
    }

    /// Ends every lease (SQLite at open: one process owns the file, so no lease can be another's).
    func releaseLeases() throws(StorageError) {
        try writer.write { connection throws(StorageError) in
            for table in ["reports", "webhook_deliveries"] {
                try connection.query(
                    "UPDATE \(table) SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL"
                )
            }
        }
    }
}
