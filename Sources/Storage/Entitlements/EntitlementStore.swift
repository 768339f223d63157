public import Domain
import Foundation

/// Redemption codes and the entitlement webhook outbox.
public struct EntitlementStore: Sendable {
    let database: SQLDatabase
    /// This process's name in outbox leases (`Ledger.instance`).
    let instance: String

    /// Uses up a code (by its hash) if it is valid now; returns once committed.
    public func redeem(codeHash: String, at now: Int64) throws(StorageError) -> RedemptionOutcome {
        try database.writer.write { connection throws(StorageError) in
            try Self.claim(codeHash: codeHash, at: now, in: connection)
        }
    }

    /// The code's record as it stands, without using it up.
    public func redemption(codeHash: String) throws(StorageError) -> RedemptionRecord? {
        try database.readers.read { connection throws(StorageError) in
            try Self.record(codeHash: codeHash, in: connection)
        }
    }

    static func record(codeHash: String, in connection: any SQLConnection) throws(StorageError) -> RedemptionRecord? {
        let rows = try connection.query(
            "SELECT purchase_id, created_at, expires_at, redeemed_at FROM redemptions WHERE code_hash = ?",
            [.text(codeHash)]
        )
        return rows.first.map { row in
            RedemptionRecord(
                codeHash: codeHash,
                purchaseId: row[0].text ?? "",
                createdAt: row[1].integer ?? 0,
                expiresAt: row[2].integer ?? 0,
                redeemedAt: row[3].integer
            )
        }
    }

    /// Uses up a code inside the caller's transaction, so what the redemption grants is written with it (a
    /// crash between the two can neither burn a code for nothing nor grant twice).
    static func claim(codeHash: String, at now: Int64, in connection: any SQLConnection) throws(StorageError)
        -> RedemptionOutcome
    {
        guard let record = try record(codeHash: codeHash, in: connection) else { return .notFound }
        if let redeemedAt = record.redeemedAt { return .alreadyRedeemed(at: redeemedAt, purchaseId: record.purchaseId) }
        if now > record.expiresAt { return .expired(at: record.expiresAt) }
        // The update is the claim: of two instances redeeming at once, the second finds it done (a read
        // before it cannot tell, under PostgreSQL's read committed).
        let claimed = try connection.query(
            "UPDATE redemptions SET redeemed_at = ? WHERE code_hash = ? AND redeemed_at IS NULL RETURNING 1",
            [.integer(now), .text(codeHash)]
        )
        guard !claimed.isEmpty else {
            let again = try connection.query(
                "SELECT redeemed_at FROM redemptions WHERE code_hash = ?",
                [.text(codeHash)]
            )
            return .alreadyRedeemed(at: again.first?.first?.integer ?? now, purchaseId: record.purchaseId)
        }
        var redeemed = record
        redeemed.redeemedAt = now
        return .redeemed(redeemed)
    }

    static let webhookColumns = """
        event_id, purchase_id, sequence, type, body, state, attempts, next_attempt_at, created_at, last_attempt_at, \
        last_status, last_error, delivered_at
        """

    static func webhook(_ row: [SQLValue]) throws(StorageError) -> WebhookDelivery {
        WebhookDelivery(
            eventId: row[0].text ?? "",
            purchaseId: row[1].text ?? "",
            sequence: row[2].integer ?? 0,
            type: row[3].text ?? "",
            body: row[4].text ?? "",
            state: try row[5].closedSet("webhook_deliveries.state"),
            attempts: row[6].integer ?? 0,
            nextAttemptAt: row[7].integer ?? 0,
            createdAt: row[8].integer ?? 0,
            lastAttemptAt: row[9].integer,
            lastStatus: row[10].integer,
            lastError: row[11].text,
            deliveredAt: row[12].integer
        )
    }

    public func webhooks(state: WebhookState? = nil, limit: Int = 100, offset: Int = 0) throws(StorageError)
        -> [WebhookDelivery]
    {
        try database.readers.read { connection throws(StorageError) in
            let filter = state == nil ? "" : "WHERE state = ?"
            let parameters: [SQLValue] =
                (state.map { [SQLValue.text($0.rawValue)] } ?? []) + [
                    .integer(Int64(limit)), .integer(Int64(offset)),
                ]
            return try connection.query(
                "SELECT \(Self.webhookColumns) FROM webhook_deliveries \(filter) ORDER BY created_at DESC LIMIT ? OFFSET ?",
                parameters
            ).decoded(Self.webhook)
        }
    }

    /// Claims due deliveries for this instance until `leaseUntil` as `ReportStore.claimDueReports` does, in each
    /// purchase's order (a delivery waits for the purchase's earlier ones).
    public func claimDueWebhooks(now: Int64, limit: Int, leaseUntil: Int64) throws(StorageError) -> [WebhookDelivery] {
        try database.claim(
            from: "webhook_deliveries",
            key: "event_id",
            columns: Self.webhookColumns,
            now: now,
            limit: limit,
            lease: Lease(owner: instance, until: leaseUntil),
            inOrder: """
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.purchase_id = c.purchase_id
                    AND e.state = 'pending' AND e.sequence < c.sequence)
                """
        ).decoded(Self.webhook).sorted { ($0.nextAttemptAt, $0.sequence) < ($1.nextAttemptAt, $1.sequence) }
    }

    /// Records a delivery attempt by this instance; dropped if another instance has leased it since.
    public func recordWebhookAttempt(_ attempt: WebhookAttempt) throws(StorageError) {
        try database.writer.write { [instance] connection throws(StorageError) in
            try connection.query(
                """
                UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = ?,
                    last_attempt_at = ?, last_status = ?, last_error = ?, lease_owner = NULL, lease_until = NULL,
                    delivered_at = CASE WHEN ? = 'delivered' THEN ? ELSE delivered_at END
                WHERE event_id = ? AND state = 'pending' AND (lease_owner IS NULL OR lease_owner = ?)
                """,
                [
                    .text(attempt.state.rawValue), .integer(attempt.nextAttemptAt), .integer(attempt.at),
                    .optional(attempt.httpStatus), .optional(attempt.error), .text(attempt.state.rawValue),
                    .integer(attempt.at), .text(attempt.eventId), .text(instance),
                ]
            )
        }
    }

    public func webhookCounts() throws(StorageError) -> [WebhookState: Int64] {
        try database.readers.read { connection throws(StorageError) in
            var counts: [WebhookState: Int64] = [:]
            for row in try connection.query("SELECT state, COUNT(*) FROM webhook_deliveries GROUP BY state") {
                counts[try row[0].closedSet("webhook_deliveries.state") as WebhookState] = row[1].integer
            }
            return counts
        }
    }
}
