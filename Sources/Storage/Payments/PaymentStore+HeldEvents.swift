public import Domain

/// Payment events whose Apple line item waits for an exchange rate (migration 9).
extension PaymentStore {
    /// Held events, oldest first: the order their line items are made in once released. `after`: the key of the
    /// last event of the previous page (keyset paging), nil for the first page.
    public func heldPaymentEvents(after key: HeldPaymentEvent.Key? = nil, limit: Int = 500) throws(StorageError)
        -> [HeldPaymentEvent]
    {
        let key = key ?? HeldPaymentEvent.Key(receivedAt: .min, provider: ProviderID(""), eventId: "")
        return try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT provider, event_id, type, body, received_at, processed_at, outcome, held_token, held_reason
                FROM payment_events WHERE held_reason IS NOT NULL
                  AND (received_at > ? OR (received_at = ? AND (provider > ? OR (provider = ? AND event_id > ?))))
                ORDER BY received_at, provider, event_id LIMIT ?
                """,
                [
                    .integer(key.receivedAt), .integer(key.receivedAt), .text(key.provider.rawValue),
                    .text(key.provider.rawValue),
                    .text(key.eventId), .integer(Int64(limit)),
                ]
            ).map { row in
                HeldPaymentEvent(
                    event: StoredPaymentEvent(
                        provider: ProviderID(row[0].text ?? ""),
                        eventId: row[1].text ?? "",
                        type: row[2].text ?? "",
                        body: row[3].text ?? "",
                        receivedAt: row[4].integer ?? 0,
                        processedAt: row[5].integer,
                        outcome: row[6].text
                    ),
                    externalPurchaseId: row[7].id() ?? "",
                    reason: row[8].text ?? ""
                )
            }
        }
    }

    /// Whether a line item of this token is held: later line items of the token wait behind it, so Apple gets
    /// them in the order they happened (a renewal after its start, a refund after its buy).
    public func hasHeldEvents(externalPurchaseId: ExternalPurchaseID) throws(StorageError) -> Bool {
        try database.readers.read { connection throws(StorageError) in
            try !connection.query(
                "SELECT 1 FROM payment_events WHERE held_token = ? AND held_reason IS NOT NULL LIMIT 1",
                [.id(externalPurchaseId)]
            ).isEmpty
        }
    }

    /// Puts off an event that waits behind a held line item of its token; the hold's release makes it due.
    public func deferBehindHold(
        provider: ProviderID,
        eventId: String,
        externalPurchaseId: ExternalPurchaseID,
        until: Int64,
        reason: String
    ) throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
            try connection.query(
                """
                UPDATE payment_events SET next_attempt_at = ?, outcome = ?, held_token = ?
                WHERE provider = ? AND event_id = ? AND processed_at IS NULL
                """,
                [
                    .integer(until), .text("waiting: " + reason), .id(externalPurchaseId), .text(provider.rawValue),
                    .text(eventId),
                ]
            )
        }
    }

    /// How many of the providers' events besides `event` wait behind a line item of `externalPurchaseId`, not yet
    /// acted on.
    public func eventsWaiting(
        behind externalPurchaseId: ExternalPurchaseID,
        besides event: (provider: ProviderID, eventId: String)
    ) throws(StorageError) -> Int {
        try database.readers.read { connection throws(StorageError) in
            Int(
                try connection.query(
                    """
                    SELECT count(*) FROM payment_events WHERE held_token = ? AND processed_at IS NULL
                      AND NOT (provider = ? AND event_id = ?)
                    """,
                    [.id(externalPurchaseId), .text(event.provider.rawValue), .text(event.eventId)]
                ).first?.first?.integer ?? 0
            )
        }
    }

    /// Makes the events that wait behind a line item of `externalPurchaseId` due now: the operator settled it (a
    /// restatement or a retraction of a version Apple set aside), and what waited for it need not wait out its
    /// hour. Returns how many.
    @discardableResult
    public func releaseEventsWaiting(behind externalPurchaseId: ExternalPurchaseID) throws(StorageError) -> Int {
        try database.writer.write { connection throws(StorageError) in
            try Self.wakeEvents(behind: externalPurchaseId, at: 0, in: connection)
        }
    }

    /// What the reason of an event put off for its purchase ends with (a refund or a dispute delivered before the
    /// checkout's completion, a renewal before its subscription's start).
    public static let noPurchaseYet = "has no purchase yet"

    /// The end of the reason of an event put off until a purchase or a charge names `key` (the payment's id, the
    /// subscription's): the mapper words its reasons with it, and a change that records that key wakes the events
    /// whose reason it is (`wakeEventsWaitingFor`).
    public static func noPurchaseYet(_ key: String) -> String { "\(key) \(noPurchaseYet)" }

    /// What the reason of an event put off for a period of its subscription ends with (a plan change billed without
    /// a period, delivered before the renewal of the period it was made in).
    public static let noPeriodYet = "has no period for it yet"

    /// The end of the reason of an event put off until subscription `key` records a period that covers it: the
    /// next change recording the subscription wakes it (`wakeEventsWaitingFor`).
    public static func noPeriodYet(_ key: String) -> String { "\(key) \(noPeriodYet)" }

    /// Makes the provider's events put off until a purchase or a charge names one of `keys` (`noPurchaseYet(_:)`,
    /// `noPeriodYet(_:)`)
    /// due at `at`: the change recording them is being written. Stripe's events name no entity to wait on, and a
    /// put-off event is looked at again only after up to a tenth of its age: a full refund delivered before its
    /// completion left the refunded purchase entitled for half an hour.
    static func wakeEventsWaitingFor(
        _ keys: Set<String>,
        provider: ProviderID,
        at: Int64,
        in connection: any SQLConnection
    )
        throws(StorageError)
    {
        for key in keys where !key.isEmpty {
            try connection.query(
                """
                UPDATE payment_events SET next_attempt_at = ?
                WHERE processed_at IS NULL AND provider = ? AND held_token IS NULL AND next_attempt_at > ?
                  AND (outcome LIKE ? ESCAPE '\\' OR outcome LIKE ? ESCAPE '\\')
                """,
                [
                    .integer(at), .text(provider.rawValue), .integer(at),
                    .text("waiting:% " + likeLiteral(noPurchaseYet(key))),
                    .text("waiting:% " + likeLiteral(noPeriodYet(key))),
                ]
            )
        }
    }

    /// `text` matched as itself by `LIKE … ESCAPE '\'` (ids hold `_`, a wildcard there).
    private static func likeLiteral(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "\\" || character == "%" || character == "_" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// Makes the events waiting behind a line item of `externalPurchaseId` due at `at`, in the caller's
    /// transaction: what they wait for came (a restatement, a placed renewal, a chargeback they follow, Apple's
    /// acceptance of the token's report). Returns how many.
    @discardableResult
    static func wakeEvents(behind externalPurchaseId: ExternalPurchaseID, at: Int64, in connection: any SQLConnection)
        throws(StorageError) -> Int
    {
        try connection.query(
            "UPDATE payment_events SET next_attempt_at = ? WHERE held_token = ? AND processed_at IS NULL RETURNING 1",
            [.integer(at), .id(externalPurchaseId)]
        ).count
    }
}
