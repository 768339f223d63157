public import Domain

/// The close's payment events: money the providers reported in the month that is not in line items yet (a refund
/// waiting behind its set-aside buy, a renewal waiting for its purchase, an event being processed, a sale held for
/// its exchange rate). Until it is, the month's line items are not all there, so the month is not closed. An event
/// counts in the month of its own time (`occurred_at`, else when it arrived), and in the environment of its token
/// (`eventToken`); one with no token yet counts in production's close, where money is. Read from
/// `payment_events_unprocessed` and `payment_events_held_order`, which hold only the events not processed yet and
/// the ones held. A held sale is processed, and its token may be of another month or accepted long ago (a
/// renewal's): only its own date puts it in a month's close.
extension CloseStore {
    /// The token an unprocessed event concerns: the one it waits behind, else the one of the payment it belongs
    /// to (a Paddle adjustment names its transaction, a first one or a renewal's, kept among the purchase's
    /// charges; a subscription's events name the subscription), so a refund put off on a sandbox purchase counts
    /// in sandbox's close. An event whose payment is not in yet, or that names none (Stripe's), has none.
    static let eventToken = """
        coalesce(e.held_token,
            (SELECT p.external_purchase_id FROM purchases p
             WHERE p.purchase_id = e.order_key AND p.provider = e.provider),
            (SELECT p.external_purchase_id FROM purchase_charges c JOIN purchases p ON p.purchase_id = c.purchase_id
             WHERE c.charge_key = e.order_key AND p.provider = e.provider),
            (SELECT p.external_purchase_id FROM purchases p
             WHERE p.subscription_id = e.order_key AND p.provider = e.provider
               AND p.external_purchase_id IS NOT NULL LIMIT 1))
        """

    /// The month's unprocessed and held events with their token, worked out once each (the month's range first,
    /// on each kind's partial index), then kept in `environment`'s close. Parameters: `range(environment:from:until:)`.
    static func pendingPaymentEvents(_ columns: String) -> String {
        """
        SELECT \(columns) FROM (
            SELECT e.provider, e.event_id, coalesce(e.occurred_at, e.received_at) AS at, e.outcome,
                \(eventToken) AS token, CASE WHEN e.held_token IS NULL THEN 0 ELSE 1 END AS behind, 0 AS held
            FROM payment_events e
            WHERE e.processed_at IS NULL
              AND coalesce(e.occurred_at, e.received_at) >= ? AND coalesce(e.occurred_at, e.received_at) < ?
            UNION ALL
            SELECT e.provider, e.event_id, coalesce(e.occurred_at, e.received_at), e.outcome, e.held_token, 0, 1
            FROM payment_events e
            WHERE e.held_reason IS NOT NULL AND e.processed_at IS NOT NULL
              AND coalesce(e.occurred_at, e.received_at) >= ? AND coalesce(e.occurred_at, e.received_at) < ?
        ) e LEFT JOIN tokens t ON t.external_purchase_id = e.token
        WHERE coalesce(t.environment, 'production') = ?
        """
    }

    /// The parameters of `pendingPaymentEvents`: the month's range once for each kind of event, then the environment.
    private static func range(environment: Environment, from: Int64, until: Int64) -> [SQLValue] {
        [.integer(from), .integer(until), .integer(from), .integer(until), .text(environment.rawValue)]
    }

    /// How many of the month's payment events are not made into line items yet (held ones included).
    public func pendingPaymentEventCount(environment: Environment, from: Int64, until: Int64) throws(StorageError)
        -> Int64
    {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                Self.pendingPaymentEvents("count(*)"),
                Self.range(environment: environment, from: from, until: until)
            ).first?.first?.integer ?? 0
        }
    }

    /// The month's payment events not made into line items yet, oldest first, at most `limit`.
    public func pendingPaymentEvents(environment: Environment, from: Int64, until: Int64, limit: Int)
        throws(StorageError) -> [CloseItem]
    {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                Self.pendingPaymentEvents("e.provider, e.event_id, e.at, e.token, e.outcome, e.behind, e.held")
                    + " ORDER BY e.at, e.provider, e.event_id LIMIT ?",
                Self.range(environment: environment, from: from, until: until) + [.integer(Int64(limit))]
            ).map { row in
                var item = CloseItem(
                    kind: .paymentEvent,
                    externalPurchaseId: row[3].id() ?? "",
                    date: row[2].integer ?? 0,
                    state: row[6].integer == 1 ? .waitingForRate : .paymentPending
                )
                item.paymentEvent = .init(
                    provider: row[0].text ?? "",
                    eventId: row[1].text ?? "",
                    waiting: row[4].text,
                    behindToken: row[5].integer == 1
                )
                return item
            }
        }
    }
}
