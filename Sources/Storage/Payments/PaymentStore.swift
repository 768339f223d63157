public import Domain
import Foundation

/// Payment sessions, provider events, purchases and their charges.
public struct PaymentStore: Sendable {
    let database: SQLDatabase

    static let sessionColumns = """
        session_id, provider, intent_id, checkout_id, external_purchase_id, product_id, currency, amount, language, \
        url, state, created_at, updated_at, browser_hash
        """

    static func paymentSession(_ row: [SQLValue]) throws(StorageError) -> PaymentSessionRecord {
        PaymentSessionRecord(
            sessionId: row[0].text ?? "",
            provider: ProviderID(row[1].text ?? ""),
            intentId: row[2].text ?? "",
            checkoutId: row[3].id() ?? "",
            externalPurchaseId: row[4].id(),
            productId: row[5].id() ?? "",
            currency: row[6].id() ?? "",
            amount: row[7].text ?? "",
            language: row[8].text ?? "",
            url: row[9].text ?? "",
            state: try row[10].closedSet("payment_sessions.state"),
            createdAt: row[11].integer ?? 0,
            updatedAt: row[12].integer ?? 0,
            browserHash: row[13].text
        )
    }

    static let purchaseColumns = """
        purchase_id, provider, checkout_id, external_purchase_id, bundle_id, product_id, kind, status, currency, \
        amount_total, amount_tax, tax_country, subscription_id, buy_line_item_id, period_end, paid_days, created_at, \
        updated_at, live
        """

    static func purchase(_ row: [SQLValue]) throws(StorageError) -> PurchaseRecord {
        PurchaseRecord(
            purchaseId: row[0].text ?? "",
            provider: ProviderID(row[1].text ?? ""),
            checkoutId: row[2].id(),
            externalPurchaseId: row[3].id(),
            bundleId: row[4].id(),
            productId: row[5].id(),
            kind: try row[6].closedSet("purchases.kind"),
            status: try row[7].closedSet("purchases.status"),
            currency: row[8].id() ?? "",
            amountTotal: row[9].integer ?? 0,
            amountTax: row[10].integer ?? 0,
            taxCountry: row[11].id() ?? "",
            subscriptionId: row[12].text,
            buyLineItemId: row[13].id(),
            periodEnd: row[14].integer,
            paidDays: row[15].integer ?? 0,
            createdAt: row[16].integer ?? 0,
            updatedAt: row[17].integer ?? 0,
            live: row[18].integer != 0
        )
    }

    /// Records a started payment; the same intent again returns the session recorded first (never two).
    public func recordPaymentSession(_ session: PaymentSessionRecord) throws(StorageError) -> PaymentSessionRecord {
        try database.writer.write { connection throws(StorageError) in
            try connection.query(
                """
                INSERT INTO payment_sessions (\(Self.sessionColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(intent_id) DO NOTHING
                """,
                [
                    .text(session.sessionId), .text(session.provider.rawValue), .text(session.intentId),
                    .id(session.checkoutId), .optional(session.externalPurchaseId), .id(session.productId),
                    .id(session.currency), .text(session.amount), .text(session.language), .text(session.url),
                    .text(session.state.rawValue), .integer(session.createdAt), .integer(session.updatedAt),
                    .optional(session.browserHash),
                ]
            )
            let rows = try connection.query(
                "SELECT \(Self.sessionColumns) FROM payment_sessions WHERE intent_id = ?",
                [.text(session.intentId)]
            )
            guard let row = rows.first else { throw StorageError(.notFound, "payment session vanished") }
            return try Self.paymentSession(row)
        }
    }

    public func paymentSession(id: String) throws(StorageError) -> PaymentSessionRecord? {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.sessionColumns) FROM payment_sessions WHERE session_id = ?",
                [.text(id)]
            ).firstDecoded(Self.paymentSession)
        }
    }

    public func paymentSession(intentId: String) throws(StorageError) -> PaymentSessionRecord? {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.sessionColumns) FROM payment_sessions WHERE intent_id = ?",
                [.text(intentId)]
            ).firstDecoded(Self.paymentSession)
        }
    }

    public func paymentSessions(checkoutId: CheckoutID) throws(StorageError) -> [PaymentSessionRecord] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.sessionColumns) FROM payment_sessions WHERE checkout_id = ? ORDER BY created_at",
                [.id(checkoutId)]
            ).decoded(Self.paymentSession)
        }
    }

    /// Stores `event` unless an event of the same provider it excludes (`rivals`: a cancellation against a
    /// completion of one payment) is stored already, in one write, so of two such posts at once one is kept.
    /// Returns the rival found, or nil when `event` is stored (now or before).
    public func storePaymentEvent(_ event: StoredPaymentEvent, unlessStored rivals: [String])
        throws(StorageError) -> String?
    {
        try database.writer.write { connection throws(StorageError) in
            let placeholders = rivals.map { _ in "?" }.joined(separator: ", ")
            if !rivals.isEmpty,
                let found = try connection.query(
                    "SELECT event_id FROM payment_events WHERE provider = ? AND event_id IN (\(placeholders)) LIMIT 1",
                    [.text(event.provider.rawValue)] + rivals.map { SQLValue.text($0) }
                ).first?.first?.text
            {
                return found
            }
            _ = try Self.insert(event, into: connection)
            return nil
        }
    }

    /// Stores a provider's event durably; false when this event id was stored before (a redelivery). An event
    /// dated before others of its entity that wait (a completion delivered after its refund) makes them due
    /// again: they are read behind it (`paymentEvents`) and so acted on right after it.
    public func storePaymentEvent(_ event: StoredPaymentEvent) throws(StorageError) -> Bool {
        try database.writer.write { connection throws(StorageError) in
            try Self.insert(event, into: connection)
        }
    }

    private static func insert(_ event: StoredPaymentEvent, into connection: any SQLConnection)
        throws(StorageError) -> Bool
    {
        let rows = try connection.query(
            """
            INSERT INTO payment_events (provider, event_id, type, body, received_at, occurred_at, order_key)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(provider, event_id) DO NOTHING RETURNING 1
            """,
            [
                .text(event.provider.rawValue), .text(event.eventId), .text(event.type), .text(event.body),
                .integer(event.receivedAt), .optional(event.occurredAt), .optional(event.orderKey),
            ]
        )
        if !rows.isEmpty, let key = event.orderKey, let occurredAt = event.occurredAt {
            try connection.query(
                """
                UPDATE payment_events SET next_attempt_at = 0
                WHERE provider = ? AND order_key = ? AND occurred_at > ? AND processed_at IS NULL
                """,
                [.text(event.provider.rawValue), .text(key), .integer(occurredAt)]
            )
        }
        return !rows.isEmpty
    }

    /// Stored events, oldest first; with `dueAt`, only unprocessed ones not deferred past it. The events of one
    /// entity (`order_key`) come together, in the order they happened, where the first of them to arrive would
    /// come: a refund delivered before its purchase is read after it.
    public func paymentEvents(unprocessedOnly: Bool, dueAt: Int64? = nil, limit: Int) throws(StorageError)
        -> [StoredPaymentEvent]
    {
        try database.readers.read { connection throws(StorageError) in
            var conditions: [String] = []
            if unprocessedOnly { conditions.append("processed_at IS NULL") }
            if dueAt != nil { conditions.append("next_attempt_at <= ?") }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            return try connection.query(
                """
                SELECT provider, event_id, type, body, received_at, processed_at, outcome, occurred_at, order_key
                FROM (
                    SELECT provider, event_id, type, body, received_at, processed_at, outcome, occurred_at, order_key,
                        CASE WHEN order_key IS NULL THEN received_at
                            ELSE min(received_at) OVER (PARTITION BY provider, order_key) END AS group_at
                    FROM payment_events \(filter)
                ) ordered
                ORDER BY group_at, provider, order_key, occurred_at, received_at, event_id LIMIT ?
                """,
                (dueAt.map { [SQLValue.integer($0)] } ?? []) + [.integer(Int64(limit))]
            ).map { row in
                StoredPaymentEvent(
                    provider: ProviderID(row[0].text ?? ""),
                    eventId: row[1].text ?? "",
                    type: row[2].text ?? "",
                    body: row[3].text ?? "",
                    receivedAt: row[4].integer ?? 0,
                    processedAt: row[5].integer,
                    outcome: row[6].text,
                    occurredAt: row[7].integer,
                    orderKey: row[8].text
                )
            }
        }
    }

    /// Puts off an event that waits for another, so it does not hold up the ones behind it. One whose entity
    /// has an earlier-dated event still unprocessed stays due: it is read right behind that one, which may be
    /// what it waits for. It waits behind no line item now (`held_token` cleared: the close tells the two apart).
    public func deferPaymentEvent(provider: ProviderID, eventId: String, until: Int64, reason: String)
        throws(StorageError)
    {
        try database.writer.write { connection throws(StorageError) in
            try connection.query(
                """
                UPDATE payment_events SET outcome = ?, held_token = NULL, next_attempt_at = CASE WHEN EXISTS (
                    SELECT 1 FROM payment_events earlier
                    WHERE earlier.provider = payment_events.provider AND earlier.order_key = payment_events.order_key
                        AND earlier.occurred_at < payment_events.occurred_at AND earlier.processed_at IS NULL
                ) THEN 0 ELSE ? END
                WHERE provider = ? AND event_id = ? AND processed_at IS NULL
                """,
                [.text("waiting: " + reason), .integer(until), .text(provider.rawValue), .text(eventId)]
            )
        }
    }

    public func purchase(id: String) throws(StorageError) -> PurchaseRecord? {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.purchaseColumns) FROM purchases WHERE purchase_id = ?",
                [.text(id)]
            ).firstDecoded(Self.purchase)
        }
    }

    public func purchase(subscriptionId: String) throws(StorageError) -> PurchaseRecord? {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.purchaseColumns) FROM purchases WHERE subscription_id = ? ORDER BY created_at LIMIT 1",
                [.text(subscriptionId)]
            ).firstDecoded(Self.purchase)
        }
    }

    /// Purchases, newest first; of one token when `externalPurchaseId` is given.
    public func purchases(externalPurchaseId: ExternalPurchaseID? = nil, limit: Int = 100, offset: Int = 0)
        throws(StorageError)
        -> [PurchaseRecord]
    {
        try database.readers.read { connection throws(StorageError) in
            let filter = externalPurchaseId == nil ? "" : "WHERE external_purchase_id = ?"
            let parameters: [SQLValue] =
                (externalPurchaseId.map { [SQLValue.id($0)] } ?? [])
                + [.integer(Int64(limit)), .integer(Int64(offset))]
            return try connection.query(
                "SELECT \(Self.purchaseColumns) FROM purchases \(filter) ORDER BY created_at DESC LIMIT ? OFFSET ?",
                parameters
            ).decoded(Self.purchase)
        }
    }

    static let chargeColumns =
        "charge_key, purchase_id, line_item_id, amount_total, amount_tax, amount_refunded, created_at"

    static func charge(_ row: [SQLValue]) -> PurchaseCharge {
        PurchaseCharge(
            chargeKey: ChargeKey(text: row[0].text ?? ""),
            purchaseId: row[1].text ?? "",
            lineItemId: row[2].id() ?? "",
            amountTotal: row[3].integer ?? 0,
            amountTax: row[4].integer ?? 0,
            amountRefunded: row[5].integer ?? 0,
            createdAt: row[6].integer ?? 0
        )
    }

    /// The purchases of the customer the app identified with this `appAccountToken`, newest first.
    public func purchases(appAccountToken: String) throws(StorageError) -> [PurchaseRecord] {
        try database.readers.read { connection throws(StorageError) in
            let columns = Self.purchaseColumns.split(separator: ",").map {
                "p." + $0.trimmingCharacters(in: .whitespacesAndNewlines)
            }.joined(separator: ", ")
            return try connection.query(
                """
                SELECT \(columns) FROM purchases p JOIN tokens t ON t.external_purchase_id = p.external_purchase_id
                WHERE t.app_account_token = ? ORDER BY p.created_at DESC LIMIT 1000
                """,
                [.text(appAccountToken)]
            ).decoded(Self.purchase)
        }
    }

    public func charge(key: ChargeKey) throws(StorageError) -> PurchaseCharge? {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.chargeColumns) FROM purchase_charges WHERE charge_key = ?",
                [.text(key.description)]
            ).firstDecoded(Self.charge)
        }
    }

    /// The charges of a purchase (its buy and renewals), oldest first.
    public func charges(purchaseId: String) throws(StorageError) -> [PurchaseCharge] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.chargeColumns) FROM purchase_charges WHERE purchase_id = ? ORDER BY created_at",
                [.text(purchaseId)]
            ).decoded(Self.charge)
        }
    }

    /// Writes everything one event changes in one transaction, marking the event processed.
    public func apply(_ change: PaymentChange) throws(StorageError) {
        try database.writer.write { [regimes = database.commissionRegimes.current] connection throws(StorageError) in
            try Self.apply(change, to: connection, dialect: database.dialect, regimes: regimes)
        }
    }
}
