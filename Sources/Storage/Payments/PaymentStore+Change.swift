import Domain

/// One payment event's writes, in the transaction the caller opened.
extension PaymentStore {
    static func apply(
        _ change: PaymentChange,
        to connection: any SQLConnection,
        dialect: SQLDialect,
        regimes: [CommissionRegime]
    ) throws(StorageError) {
        if let event = change.event, try !claim(event, for: change, in: connection) { return }
        if let release = change.release, try !claimRelease(release, for: change, in: connection) { return }
        if let purchase = change.purchase {
            if let token = purchase.externalPurchaseId {
                try TokenDays.addPaymentIfFirst(externalPurchaseId: token, dialect: dialect, into: connection)
            }
            try upsert(purchase, asRead: change.purchaseAsRead, into: connection)
        }
        try wakeEventsWaitingFor(change, in: connection)
        try recordMoney(change, in: connection)
        try recordSessionAndRedemption(change, in: connection)
        try queue(change.webhooks, in: connection, dialect: dialect)
        try storeLineItems(change, in: connection)
        try refreshMoneyRows(of: change, in: connection, dialect: dialect, regimes: regimes)
        if let token = change.wakesEventsBehind {
            try wakeEvents(behind: token, at: change.at, in: connection)
        }
    }

    /// Wakes the events put off until this change's purchase, subscription or payments were known: a refund that
    /// came before its checkout's completion, a dispute before a renewal's payment was named.
    private static func wakeEventsWaitingFor(_ change: PaymentChange, in connection: any SQLConnection)
        throws(StorageError)
    {
        guard let provider = change.purchase?.provider ?? change.event?.provider else { return }
        var keys = Set([change.purchase?.purchaseId, change.purchase?.subscriptionId].compactMap { $0 })
        for charge in change.charges {
            if case .payment(let id) = charge.chargeKey { keys.insert(id) }
        }
        try wakeEventsWaitingFor(keys, provider: provider, at: change.at, in: connection)
    }

    /// Claims the event for this change: acted on already (a redelivery raced the first one, or another
    /// instance), nothing may happen twice. The update is the claim, so two instances at once cannot both find
    /// the event open. False when it was taken.
    private static func claim(
        _ event: (provider: ProviderID, eventId: String),
        for change: PaymentChange,
        in connection: any SQLConnection
    ) throws(StorageError) -> Bool {
        let claimed = try connection.query(
            """
            UPDATE payment_events SET processed_at = ?, outcome = ?
            WHERE provider = ? AND event_id = ? AND processed_at IS NULL RETURNING 1
            """,
            [
                .integer(change.at), .text(change.outcome.description), .text(event.provider.rawValue),
                .text(event.eventId),
            ]
        )
        guard !claimed.isEmpty else { return false }
        if let hold = change.hold {
            try connection.query(
                "UPDATE payment_events SET held_reason = ?, held_token = ? WHERE provider = ? AND event_id = ?",
                [
                    .text(hold.reason), .id(hold.externalPurchaseId), .text(event.provider.rawValue),
                    .text(event.eventId),
                ]
            )
        }
        return true
    }

    /// Claims a held event's release: two passes at once cannot both make the held line items. The events held
    /// behind the same token are due at once. False when it was taken.
    private static func claimRelease(
        _ release: (provider: ProviderID, eventId: String, externalPurchaseId: ExternalPurchaseID),
        for change: PaymentChange,
        in connection: any SQLConnection
    ) throws(StorageError) -> Bool {
        let claimed = try connection.query(
            """
            UPDATE payment_events SET held_reason = NULL, held_token = NULL, outcome = ?
            WHERE provider = ? AND event_id = ? AND held_reason IS NOT NULL RETURNING 1
            """,
            [.text(change.outcome.description), .text(release.provider.rawValue), .text(release.eventId)]
        )
        guard !claimed.isEmpty else { return false }
        try connection.query(
            "UPDATE payment_events SET next_attempt_at = ? WHERE held_token = ? AND processed_at IS NULL",
            [.integer(change.at), .id(release.externalPurchaseId)]
        )
        return true
    }

    /// The charges a refund will name, what was refunded of them, and what a chargeback's reversal gave back.
    private static func recordMoney(_ change: PaymentChange, in connection: any SQLConnection) throws(StorageError) {
        for charge in change.charges {
            try connection.query(
                """
                INSERT INTO purchase_charges (charge_key, purchase_id, line_item_id, amount_total, amount_tax,
                    amount_refunded, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(charge_key) DO NOTHING
                """,
                [
                    .text(charge.chargeKey.description), .text(charge.purchaseId), .id(charge.lineItemId),
                    .integer(charge.amountTotal), .integer(charge.amountTax), .integer(charge.amountRefunded),
                    .integer(charge.createdAt),
                ]
            )
        }
        if let refund = change.refund {
            // Cumulative figures only grow: a late, older delivery never lowers what was refunded.
            let updated = try connection.query(
                """
                UPDATE purchase_charges SET amount_refunded = MAX(amount_refunded, ?)
                WHERE charge_key = ? AND amount_refunded = COALESCE(?, amount_refunded) RETURNING 1
                """,
                [
                    .integer(refund.amountRefunded), .text(refund.chargeKey.description),
                    .optional(change.refundedBefore),
                ]
            )
            if updated.isEmpty, change.refundedBefore != nil {
                throw StorageError(
                    .conflict,
                    "the refunded total of \(refund.chargeKey) changed while this refund was worked out; it is "
                        + "worked out again"
                )
            }
        }
        if let reversal = change.refundReversal {
            try connection.query(
                """
                UPDATE purchase_charges SET amount_refunded = CASE WHEN amount_refunded > ? THEN amount_refunded - ?
                    ELSE 0 END WHERE charge_key = ?
                """,
                [.integer(reversal.amount), .integer(reversal.amount), .text(reversal.chargeKey.description)]
            )
        }
    }

    /// The developer's webhooks, in order per purchase.
    private static func queue(
        _ webhooks: [WebhookDelivery],
        in connection: any SQLConnection,
        dialect: SQLDialect
    ) throws(StorageError) {
        for webhook in webhooks {
            // The next position among the purchase's events keeps them in order for the receiver. Instances
            // adding to one purchase take turns (the position is read, then taken); the unique index
            // `webhook_deliveries_order` stands behind it.
            if let serialize = dialect.serializeOnKey {
                try connection.query(serialize, [.text("webhook-order\u{0}" + webhook.purchaseId)])
            }
            try connection.query(
                """
                INSERT INTO webhook_deliveries (event_id, purchase_id, sequence, type, body, state, attempts,
                    next_attempt_at, created_at)
                SELECT ?, ?, COALESCE(MAX(sequence), 0) + 1, ?, ?, 'pending', 0, ?, ?
                FROM webhook_deliveries WHERE purchase_id = ?
                ON CONFLICT(event_id) DO NOTHING
                """,
                [
                    .text(webhook.eventId), .text(webhook.purchaseId), .text(webhook.type), .text(webhook.body),
                    .integer(webhook.nextAttemptAt), .integer(webhook.createdAt), .text(webhook.purchaseId),
                ]
            )
        }
    }

    /// New line items (held ones dated), restatements, and versions set aside for correction.
    private static func storeLineItems(_ change: PaymentChange, in connection: any SQLConnection) throws(StorageError) {
        let items =
            change.lineItems.map { ($0, Int64?.none) } + change.lineItemsAwaitingToken.map { ($0, Int64?(change.at)) }
        for (item, awaitingTokenSince) in items {
            let known = try connection.query(
                "SELECT 1 FROM line_items WHERE external_purchase_id = ? AND line_item_id = ?",
                [.id(item.externalPurchaseId), .id(item.lineItemId)]
            )
            guard known.isEmpty else { continue }
            try connection.query(
                """
                INSERT INTO line_items (external_purchase_id, line_item_id, body, received_at, held_since)
                VALUES (?, ?, ?, ?, ?)
                """,
                [
                    .id(item.externalPurchaseId), .id(item.lineItemId), .text(item.body), .integer(change.at),
                    awaitingTokenSince.map(SQLValue.integer) ?? .null,
                ]
            )
        }
        for item in change.restatements {
            try connection.query(
                "INSERT INTO line_items (external_purchase_id, line_item_id, body, received_at) VALUES (?, ?, ?, ?)",
                [.id(item.externalPurchaseId), .id(item.lineItemId), .text(item.body), .integer(change.at)]
            )
        }
        for rewrite in change.heldRewrites {
            // Only while it still awaits a token and was never sent: a row placed meanwhile is Apple's to hold.
            try connection.query(
                """
                UPDATE line_items SET body = ?
                WHERE id = ? AND held_since IS NOT NULL AND report_request_identifier IS NULL
                """,
                [.text(rewrite.body), .integer(rewrite.rowId)]
            )
        }
        for item in change.settlesSetAside {
            try connection.query(
                """
                UPDATE line_items SET corrected_at = ?
                WHERE external_purchase_id = ? AND line_item_id = ? AND correction IS NOT NULL AND corrected_at IS NULL
                """,
                [.integer(change.at), .id(item.externalPurchaseId), .id(item.lineItemId)]
            )
        }
        for item in change.setAside {
            // The same version again (a redelivery) is not stored twice; a new version is kept beside the others.
            let known = try connection.query(
                "SELECT 1 FROM line_items WHERE external_purchase_id = ? AND line_item_id = ? AND body = ?",
                [.id(item.externalPurchaseId), .id(item.lineItemId), .text(item.body)]
            )
            guard known.isEmpty else { continue }
            try connection.query(
                """
                INSERT INTO line_items (external_purchase_id, line_item_id, body, received_at, correction)
                VALUES (?, ?, ?, ?, ?)
                """,
                [
                    .id(item.externalPurchaseId), .id(item.lineItemId), .text(item.body), .integer(change.at),
                    .text(item.note),
                ]
            )
        }
    }

    /// The payment session's new state and a redemption code made for the purchase.
    private static func recordSessionAndRedemption(_ change: PaymentChange, in connection: any SQLConnection)
        throws(StorageError)
    {
        if let session = change.sessionState {
            // A paid session stays paid whatever arrives after it.
            try connection.query(
                "UPDATE payment_sessions SET state = ?, updated_at = ? WHERE session_id = ? AND state != 'complete'",
                [.text(session.state.rawValue), .integer(change.at), .text(session.sessionId)]
            )
        }
        if let redemption = change.redemption {
            try connection.query(
                """
                INSERT INTO redemptions (code_hash, purchase_id, created_at, expires_at) VALUES (?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """,
                [
                    .text(redemption.codeHash), .text(redemption.purchaseId), .integer(redemption.createdAt),
                    .integer(redemption.expiresAt),
                ]
            )
        }
    }

    /// The money rows of every line item the change wrote.
    private static func refreshMoneyRows(
        of change: PaymentChange,
        in connection: any SQLConnection,
        dialect: SQLDialect,
        regimes: [CommissionRegime]
    ) throws(StorageError) {
        // After the charges above, so a buy's pricing amount and provider come from its charge; buys before the
        // refunds that take their product and commission from them.
        let changed =
            change.lineItems + change.lineItemsAwaitingToken + change.restatements
            + change.setAside.map { ($0.externalPurchaseId, $0.lineItemId, $0.body) }
        let settled = change.settlesSetAside.map { (externalPurchaseId: $0.0, lineItemId: $0.1) }
        for item in MoneyRows.buysFirst(changed, body: { $0.body }).map({ ($0.externalPurchaseId, $0.lineItemId) })
            + settled
        {
            try MoneyRows.refresh(
                lineItemId: item.lineItemId,
                externalPurchaseId: item.externalPurchaseId,
                in: connection,
                dialect: dialect,
                regimes: regimes
            )
        }
    }

    /// Inserts the purchase, or updates it while it is still as `read` (`PaymentChange.purchaseAsRead`).
    private static func upsert(
        _ purchase: PurchaseRecord,
        asRead read: PurchaseRecord?,
        into connection: any SQLConnection
    )
        throws(StorageError)
    {
        let unchanged =
            read == nil
            ? ""
            : """
            WHERE purchases.status = ? AND COALESCE(purchases.period_end, -1) = ? AND purchases.updated_at = ?
            """
        let written = try connection.query(
            """
            INSERT INTO purchases (\(purchaseColumns))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(purchase_id) DO UPDATE SET status = excluded.status,
                buy_line_item_id = COALESCE(excluded.buy_line_item_id, purchases.buy_line_item_id),
                period_end = COALESCE(excluded.period_end, purchases.period_end),
                paid_days = MAX(purchases.paid_days, excluded.paid_days), updated_at = excluded.updated_at
            \(unchanged) RETURNING 1
            """,
            [
                .text(purchase.purchaseId), .text(purchase.provider.rawValue), .optional(purchase.checkoutId),
                .optional(purchase.externalPurchaseId), .optional(purchase.bundleId), .optional(purchase.productId),
                .text(purchase.kind.rawValue), .text(purchase.status.rawValue), .id(purchase.currency),
                .integer(purchase.amountTotal), .integer(purchase.amountTax), .id(purchase.taxCountry),
                .optional(purchase.subscriptionId), .optional(purchase.buyLineItemId), .optional(purchase.periodEnd),
                .integer(purchase.paidDays), .integer(purchase.createdAt), .integer(purchase.updatedAt),
                .integer(purchase.live ? 1 : 0),
            ]
                + (read.map { [.text($0.status.rawValue), .integer($0.periodEnd ?? -1), .integer($0.updatedAt)] } ?? [])
        )
        if written.isEmpty {
            throw StorageError(
                .conflict,
                "purchase \(purchase.purchaseId) changed while this event was worked out; it is worked out again"
            )
        }
    }
}
