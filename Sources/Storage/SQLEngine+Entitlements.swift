import Foundation

/// Redemption codes and the entitlement webhook outbox.
extension SQLEngine {
    /// Marks a code redeemed if it is unused and not expired, in one transaction; says why not otherwise.
    func redeem(codeHash: String, at now: Int64) throws(StorageError) -> RedemptionOutcome {
        try writer.write { connection throws(StorageError) in
            let rows = try connection.query(
                "SELECT purchase_id, created_at, expires_at, redeemed_at FROM redemptions WHERE code_hash = ?",
                [.text(codeHash)]
            )
            guard let row = rows.first else { return .notFound }
            let record = RedemptionRecord(
                codeHash: codeHash,
                purchaseId: row[0].text ?? "",
                createdAt: row[1].integer ?? 0,
                expiresAt: row[2].integer ?? 0,
                redeemedAt: row[3].integer
            )
            if let redeemedAt = record.redeemedAt { return .alreadyRedeemed(at: redeemedAt) }
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
                return .alreadyRedeemed(at: again.first?.first?.integer ?? now)
            }
            var redeemed = record
            redeemed.redeemedAt = now
            return .redeemed(redeemed)
        }
    }

    func purchases(appAccountToken: String) throws(StorageError) -> [PurchaseRecord] {
        try read { connection throws(StorageError) in
            let columns = Self.purchaseColumns.split(separator: ",").map {
                "p." + $0.trimmingCharacters(in: .whitespacesAndNewlines)
            }.joined(separator: ", ")
            return try connection.query(
                """
                SELECT \(columns) FROM purchases p JOIN tokens t ON t.external_purchase_id = p.external_purchase_id
                WHERE t.app_account_token = ? ORDER BY p.created_at DESC LIMIT 1000
                """,
                [.text(appAccountToken)]
            ).map(Self.purchase)
        }
    }

    static let webhookColumns = """
        event_id, purchase_id, sequence, type, body, state, attempts, next_attempt_at, created_at, last_attempt_at, \
        last_status, last_error, delivered_at
        """

    static func webhook(_ row: [SQLValue]) -> WebhookDelivery {
        WebhookDelivery(
            eventId: row[0].text ?? "",
            purchaseId: row[1].text ?? "",
            sequence: row[2].integer ?? 0,
            type: row[3].text ?? "",
            body: row[4].text ?? "",
            state: WebhookDelivery.State(rawValue: row[5].text ?? "") ?? .pending,
            attempts: row[6].integer ?? 0,
            nextAttemptAt: row[7].integer ?? 0,
            createdAt: row[8].integer ?? 0,
            lastAttemptAt: row[9].integer,
            lastStatus: row[10].integer,
            lastError: row[11].text,
            deliveredAt: row[12].integer
        )
    }

    /// Deliveries due now, at most one per purchase: its earliest pending event, so a receiver sees a
    /// purchase's events in the order they happened.
    func dueWebhooks(now: Int64, limit: Int) throws(StorageError) -> [WebhookDelivery] {
        try read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.webhookColumns) FROM webhook_deliveries w
                WHERE w.state = 'pending' AND w.next_attempt_at <= ?
                  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.purchase_id = w.purchase_id
                      AND e.state = 'pending' AND e.sequence < w.sequence)
                ORDER BY w.next_attempt_at LIMIT ?
                """,
                [.integer(now), .integer(Int64(limit))]
            ).map(Self.webhook)
        }
    }

    func webhooks(state: WebhookDelivery.State?, limit: Int, offset: Int) throws(StorageError) -> [WebhookDelivery] {
        try read { connection throws(StorageError) in
            let filter = state == nil ? "" : "WHERE state = ?"
            let parameters: [SQLValue] =
                (state.map { [SQLValue.text($0.rawValue)] } ?? []) + [
                    .integer(Int64(limit)), .integer(Int64(offset)),
                ]
            return try connection.query(
                "SELECT \(Self.webhookColumns) FROM webhook_deliveries \(filter) ORDER BY created_at DESC LIMIT ? OFFSET ?",
                parameters
            ).map(Self.webhook)
        }
    }

    func recordWebhookAttempt(_ attempt: WebhookAttempt, owner: String) throws(StorageError) {
        try writer.write { connection throws(StorageError) in
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
                    .integer(attempt.at), .text(attempt.eventId), .text(owner),
                ]
            )
        }
    }

    func webhookCounts() throws(StorageError) -> [WebhookDelivery.State: Int64] {
        try read { connection throws(StorageError) in
            var counts: [WebhookDelivery.State: Int64] = [:]
            for row in try connection.query("SELECT state, COUNT(*) FROM webhook_deliveries GROUP BY state") {
                if let state = WebhookDelivery.State(rawValue: row[0].text ?? "") { counts[state] = row[1].integer }
            }
            return counts
        }
    }
}
