public import Domain

/// App Store Server Notifications: stored before they are acknowledged, acted on exactly once (the action and
/// the `processed_at` mark share one transaction).
public struct NotificationStore: Sendable {
    let database: SQLDatabase

    static let notificationColumns = """
        notification_uuid, notification_type, subtype, external_purchase_id, environment, signed_date, received_at,
        source, signed_payload, processed_at, outcome
        """

    static func storedNotification(_ row: [SQLValue]) throws(StorageError) -> StoredNotification {
        StoredNotification(
            notificationUUID: row[0].text ?? "",
            notificationType: row[1].text ?? "",
            subtype: row[2].text,
            externalPurchaseId: row[3].id(),
            environment: try row[4].closedSetIfPresent("notifications.environment"),
            signedDate: row[5].integer ?? 0,
            receivedAt: row[6].integer ?? 0,
            source: try row[7].closedSet("notifications.source"),
            signedPayload: row[8].text ?? "",
            processedAt: row[9].integer,
            outcome: try row[10].closedSetIfPresent("notifications.outcome")
        )
    }

    /// Stores a verified notification; true when it is new, false when its `notificationUUID` is known already.
    /// Returns once committed.
    public func storeNotification(_ notification: StoredNotification) throws(StorageError) -> Bool {
        try database.writer.write { connection throws(StorageError) in
            !(try connection.query(
                """
                INSERT INTO notifications (notification_uuid, notification_type, subtype, external_purchase_id,
                    environment, signed_date, received_at, source, signed_payload)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(notification_uuid) DO NOTHING RETURNING 1
                """,
                [
                    .text(notification.notificationUUID), .text(notification.notificationType),
                    .optional(notification.subtype), .optional(notification.externalPurchaseId),
                    .optional(notification.environment?.rawValue), .integer(notification.signedDate),
                    .integer(notification.receivedAt), .text(notification.source.rawValue),
                    .text(notification.signedPayload),
                ]
            ).isEmpty)
        }
    }

    /// Stored notifications, oldest first.
    public func notifications(unprocessedOnly: Bool = false, limit: Int = 500) throws(StorageError)
        -> [StoredNotification]
    {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.notificationColumns) FROM notifications
                \(unprocessedOnly ? "WHERE processed_at IS NULL" : "") ORDER BY received_at LIMIT ?
                """,
                [.integer(Int64(limit))]
            ).decoded(Self.storedNotification)
        }
    }

    public func notification(uuid: String) throws(StorageError) -> StoredNotification? {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.notificationColumns) FROM notifications WHERE notification_uuid = ?",
                [.text(uuid)]
            ).firstDecoded(Self.storedNotification)
        }
    }

    /// Acts on a notification and marks it processed in one transaction; nil when it was processed already.
    /// A known token takes Apple's values for the fields Apple sent; the result lists what changed.
    @discardableResult
    public func apply(_ change: NotificationChange) throws(StorageError) -> AppliedNotification? {
        try database.writer.write {
            [dialect = database.dialect, regimes = database.commissionRegimes.current]
            connection throws(StorageError) -> AppliedNotification? in
            // The claim is the update itself: of two instances acting on one notification at once, the second
            // waits for the first's row lock and then finds it processed (a read-then-write would let both act).
            let claimed = try connection.query(
                "UPDATE notifications SET processed_at = ? WHERE notification_uuid = ? AND processed_at IS NULL RETURNING 1",
                [.integer(change.at), .text(change.notificationUUID)]
            )
            guard !claimed.isEmpty else { return nil }
            var outcome = change.outcome
            var dueNow = change.dueNow
            var corrections: [TokenCorrection] = []
            if let token = change.token {
                if try Self.insertIfAbsent(token, checkoutId: change.checkoutId ?? "", at: change.at, connection) {
                    if let report = change.reportIfRecorded { try ReportStore.insert(report, into: connection) }
                } else {
                    // Known: Apple's values replace what a landing or a forward recorded from an unsigned token,
                    // and a report Apple asked for is made due instead of reporting the token as unrecognized.
                    corrections = try Self.correct(token, connection)
                    if !corrections.isEmpty {
                        try MoneyRows.tokenCorrected(
                            token.token.externalPurchaseId,
                            formerBundleId: corrections.first { $0.field == "bundleId" }?.recorded.map(BundleID.init),
                            in: connection,
                            dialect: dialect,
                            regimes: regimes
                        )
                    }
                    if change.reportIfRecorded != nil {
                        outcome = change.outcomeIfKnown ?? outcome
                        dueNow = token.token.externalPurchaseId
                    }
                }
            }
            if let dueNow {
                try connection.query(
                    "UPDATE tokens SET report_due_at = COALESCE(report_due_at, ?) WHERE external_purchase_id = ?",
                    [.integer(change.at), .id(dueNow)]
                )
                try connection.query(
                    """
                    UPDATE reports SET next_attempt_at = min(next_attempt_at, ?)
                    WHERE external_purchase_id = ? AND state = 'pending'
                    """,
                    [.integer(change.at), .id(dueNow)]
                )
                // A report Apple rejected goes again (same bytes, same requestIdentifier): Apple says it has no
                // report for the token, so the rejection must not keep it silent (Apple: "subtype", UNREPORTED).
                try connection.query(
                    """
                    UPDATE reports SET state = 'pending', next_attempt_at = ?
                    WHERE external_purchase_id = ? AND state = 'rejected'
                    """,
                    [.integer(change.at), .id(dueNow)]
                )
                try MoneyRows.reportsChanged(forToken: dueNow, in: connection)
            }
            try connection.query(
                "UPDATE notifications SET processed_at = ?, outcome = ? WHERE notification_uuid = ?",
                [.integer(change.at), .text(outcome.rawValue), .text(change.notificationUUID)]
            )
            return AppliedNotification(outcome: outcome, corrections: corrections)
        }
    }

    /// Gives a known token Apple's values for its app, creation date, type and expiry, and returns the fields
    /// that differed. Apple's token JSON carries `tokenType` and `tokenExpirationDate` exactly for custom-link
    /// tokens (notifications since version 2.17, older than anything Get Notification History still returns),
    /// so a field Apple leaves out is absent for the token, and a recorded one is cleared. The raw token stays
    /// as it arrived: it is what was received, kept for audit, and nothing reads it for reporting.
    private static func correct(_ token: TokenFields, _ connection: any SQLConnection) throws(StorageError)
        -> [TokenCorrection]
    {
        let rows = try connection.query(
            """
            SELECT app_apple_id, bundle_id, token_created_at, token_type, token_expires_at FROM tokens
            WHERE external_purchase_id = ?
            """,
            [.id(token.token.externalPurchaseId)]
        )
        guard let row = rows.first else { return [] }
        let pairs: [(String, String?, String?)] = [
            ("appAppleId", row[0].integer.map(String.init), String(token.token.appAppleId)),
            ("bundleId", row[1].text, token.token.bundleId.rawValue),
            ("tokenCreationDate", row[2].integer.map(String.init), String(token.token.tokenCreationDate)),
            ("tokenType", row[3].text, token.token.tokenType),
            ("tokenExpirationDate", row[4].integer.map(String.init), token.token.tokenExpirationDate.map(String.init)),
        ]
        let corrections = pairs.filter { $0.1 != $0.2 }.map {
            TokenCorrection(field: $0.0, recorded: $0.1, apple: $0.2)
        }
        guard !corrections.isEmpty else { return [] }
        try connection.query(
            """
            UPDATE tokens SET app_apple_id = ?, bundle_id = ?, token_created_at = ?, token_type = ?,
                token_expires_at = ?
            WHERE external_purchase_id = ?
            """,
            [
                .integer(token.token.appAppleId), .id(token.token.bundleId), .integer(token.token.tokenCreationDate),
                .optional(token.token.tokenType), .optional(token.token.tokenExpirationDate),
                .id(token.token.externalPurchaseId),
            ]
        )
        if corrections.contains(where: { $0.field == "bundleId" }) {
            try connection.query(
                "UPDATE checkouts SET bundle_id = ? WHERE external_purchase_id = ?",
                [.id(token.token.bundleId), .id(token.token.externalPurchaseId)]
            )
        }
        return corrections
    }

    /// A token learned from a notification: one row per externalPurchaseId, never overwriting a sighting.
    private static func insertIfAbsent(
        _ token: TokenFields,
        checkoutId: CheckoutID,
        at: Int64,
        _ connection: any SQLConnection
    ) throws(StorageError) -> Bool {
        let inserted = try connection.query(
            """
            INSERT INTO tokens (external_purchase_id, checkout_id, raw_token, app_apple_id, bundle_id, token_type,
                token_created_at, token_expires_at, environment, source, app_account_token, first_seen_at,
                last_seen_at, visit_count)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, 0)
            ON CONFLICT(external_purchase_id) DO NOTHING RETURNING 1
            """,
            [
                // As a landing's: the raw token's fields are in their columns, the text itself is not kept.
                .id(token.token.externalPurchaseId), .id(checkoutId), .text(""),
                .integer(token.token.appAppleId),
                .id(token.token.bundleId), .optional(token.token.tokenType), .integer(token.token.tokenCreationDate),
                .optional(token.token.tokenExpirationDate), .text(token.token.environment.rawValue),
                .text(token.source.rawValue),
                .integer(at), .integer(at),
            ]
        )
        guard !inserted.isEmpty else { return false }
        try TokenDays.addToken(
            firstSeenAt: at,
            environment: token.token.environment,
            source: token.source,
            into: connection
        )
        try connection.query(
            """
            INSERT INTO checkouts (id, external_purchase_id, bundle_id, created_at) VALUES (?, ?, ?, ?)
            ON CONFLICT(id) DO NOTHING
            """,
            [.id(checkoutId), .id(token.token.externalPurchaseId), .id(token.token.bundleId), .integer(at)]
        )
        return true
    }

    /// Which token each of `lineItemIds` was posted for, among the tokens of the app `bundleId` (Apple: a
    /// `lineItemId` "must be unique per app").
    public func lineItemOwners(
        _ lineItemIds: [LineItemID],
        bundleId: BundleID
    ) throws(StorageError) -> [LineItemID: ExternalPurchaseID] {
        guard !lineItemIds.isEmpty else { return [:] }
        return try database.readers.read { connection throws(StorageError) in
            var owners: [LineItemID: ExternalPurchaseID] = [:]
            for id in Set(lineItemIds) {
                let rows = try connection.query(
                    """
                    SELECT l.external_purchase_id FROM line_items l
                    JOIN tokens t ON t.external_purchase_id = l.external_purchase_id
                    WHERE l.line_item_id = ? AND t.bundle_id = ? ORDER BY l.id LIMIT 1
                    """,
                    [.id(id), .id(bundleId)]
                )
                if let owner: ExternalPurchaseID = rows.first?.first?.id() { owners[id] = owner }
            }
            return owners
        }
    }
}
