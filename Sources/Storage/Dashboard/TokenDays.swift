import Domain

/// Per first-seen UTC day, environment and source: the tokens, those that reached a checkout intent, those with
/// a purchase and those with an accepted report (`token_days`), counted in the transaction that writes what they count, so the dashboard's
/// chart and funnel read a row per day instead of every token. Only additive updates: instances writing at once
/// on PostgreSQL each add their own, and the counts stay exact.
enum TokenDays {
    /// Counts a new token first seen at `firstSeenAt`.
    static func addToken(
        firstSeenAt: Int64,
        environment: Environment,
        source: TokenSource,
        into connection: any SQLConnection
    ) throws(StorageError) {
        try connection.query(
            """
            INSERT INTO token_days (day, environment, source, tokens) VALUES (?, ?, ?, 1)
            ON CONFLICT (day, environment, source) DO UPDATE SET tokens = token_days.tokens + 1
            """,
            [.integer(firstSeenAt / Milliseconds.day), .text(environment.rawValue), .text(source.rawValue)]
        )
    }

    /// Adds 1 to `column` on the day of the token `externalPurchaseId` (nothing for an unknown token).
    static func addOne(to column: String, for externalPurchaseId: String, _ connection: any SQLConnection)
        throws(StorageError)
    {
        try connection.query(
            """
            UPDATE token_days SET \(column) = \(column) + 1
            WHERE day = (SELECT t.first_seen_at / \(Milliseconds.day) FROM tokens t WHERE t.external_purchase_id = ?)
              AND environment = (SELECT t.environment FROM tokens t WHERE t.external_purchase_id = ?)
              AND source = (SELECT t.source FROM tokens t WHERE t.external_purchase_id = ?)
            """,
            Array(repeating: .text(externalPurchaseId), count: 3)
        )
    }

    /// Counts the checkout's token as having reached a checkout intent, if this is the checkout's first intent
    /// (the one about to be inserted). Writers of one checkout take turns on PostgreSQL, so two first intents
    /// at once count once.
    static func addCheckoutIfFirstIntent(
        checkoutId: String,
        dialect: SQLDialect,
        into connection: any SQLConnection
    ) throws(StorageError) {
        if let serialize = dialect.serializeOnKey {
            try connection.query(serialize, [.text("funnel-checkout\u{0}" + checkoutId)])
        }
        let earlier = try connection.query(
            "SELECT 1 FROM checkout_intents WHERE checkout_id = ? LIMIT 1",
            [.text(checkoutId)]
        )
        guard earlier.isEmpty else { return }
        // The token whose checkout this is (the funnel's `tokens.checkout_id`).
        let token = try connection.query(
            """
            SELECT t.external_purchase_id FROM checkouts c
            JOIN tokens t ON t.external_purchase_id = c.external_purchase_id AND t.checkout_id = c.id
            WHERE c.id = ?
            """,
            [.text(checkoutId)]
        )
        guard let id = token.first?.first?.text else { return }
        try addOne(to: "checkouts", for: id, connection)
    }

    /// Counts the token as reported, if `at` is when its first report was accepted (`tokens.accepted_at`, which
    /// this sets, as the monthly close reads it): the token's row, locked by the update until the transaction
    /// ends, makes two acceptances at once count once.
    static func addAcceptedReport(for externalPurchaseId: String, at: Int64, into connection: any SQLConnection)
        throws(StorageError)
    {
        let first = try connection.query(
            """
            UPDATE tokens SET accepted_at = ? WHERE external_purchase_id = ? AND accepted_at IS NULL
            RETURNING first_seen_at, environment, source
            """,
            [.integer(at), .text(externalPurchaseId)]
        )
        guard let row = first.first, let firstSeenAt = row[0].integer else { return }
        try connection.query(
            "UPDATE token_days SET reported = reported + 1 WHERE day = ? AND environment = ? AND source = ?",
            [.integer(firstSeenAt / Milliseconds.day), row[1], row[2]]
        )
    }

    /// Counts the token as having a purchase, if the one about to be written is its first. Writers of one token
    /// take turns on PostgreSQL, so two first purchases at once count once.
    static func addPaymentIfFirst(
        externalPurchaseId: String,
        dialect: SQLDialect,
        into connection: any SQLConnection
    ) throws(StorageError) {
        if let serialize = dialect.serializeOnKey {
            try connection.query(serialize, [.text("funnel-payment\u{0}" + externalPurchaseId)])
        }
        let earlier = try connection.query(
            "SELECT purchase_id FROM purchases WHERE external_purchase_id = ? LIMIT 1",
            [.text(externalPurchaseId)]
        )
        guard earlier.isEmpty else { return }
        try addOne(to: "payments", for: externalPurchaseId, connection)
    }
}
