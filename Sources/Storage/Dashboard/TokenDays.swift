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
        try addTokens(
            1,
            day: firstSeenAt / Milliseconds.day,
            environment: environment,
            source: source,
            into: connection
        )
    }

    /// Counts `count` new tokens first seen on `day` (days since 1970, UTC).
    static func addTokens(
        _ count: Int64,
        day: Int64,
        environment: Environment,
        source: TokenSource,
        into connection: any SQLConnection
    ) throws(StorageError) {
        try connection.query(
            """
            INSERT INTO token_days (day, environment, source, tokens) VALUES (?, ?, ?, ?)
            ON CONFLICT (day, environment, source) DO UPDATE SET tokens = token_days.tokens + excluded.tokens
            """,
            [.integer(day), .text(environment.rawValue), .text(source.rawValue), .integer(count)]
        )
    }

    /// Adds 1 to `column` on the day of the token `externalPurchaseId` (nothing for an unknown token).
    static func addOne(to column: String, for externalPurchaseId: ExternalPurchaseID, _ connection: any SQLConnection)
        throws(StorageError)
    {
        try connection.query(
            """
            UPDATE token_days SET \(column) = \(column) + 1
            WHERE day = (SELECT t.first_seen_at / \(Milliseconds.day) FROM tokens t WHERE t.external_purchase_id = ?)
              AND environment = (SELECT t.environment FROM tokens t WHERE t.external_purchase_id = ?)
              AND source = (SELECT t.source FROM tokens t WHERE t.external_purchase_id = ?)
            """,
            Array(repeating: .id(externalPurchaseId), count: 3)
        )
    }

    /// Counts the checkout's token as having reached a checkout intent, if this is the checkout's first intent
    /// (the one about to be inserted). Writers of one checkout take turns on PostgreSQL, so two first intents
    /// at once count once.
    static func addCheckoutIfFirstIntent(
        checkoutId: CheckoutID,
        dialect: SQLDialect,
        into connection: any SQLConnection
    ) throws(StorageError) {
        if let serialize = dialect.serializeOnKey {
            try connection.query(serialize, [.text("funnel-checkout\u{0}" + checkoutId.rawValue)])
        }
        let earlier = try connection.query(
            "SELECT 1 FROM checkout_intents WHERE checkout_id = ? LIMIT 1",
            [.id(checkoutId)]
        )
        guard earlier.isEmpty else { return }
        // The token whose checkout this is (the funnel's `tokens.checkout_id`).
        let token = try connection.query(
            """
            SELECT t.external_purchase_id FROM checkouts c
            JOIN tokens t ON t.external_purchase_id = c.external_purchase_id AND t.checkout_id = c.id
            WHERE c.id = ?
            """,
            [.id(checkoutId)]
        )
        guard let id: ExternalPurchaseID = token.first?.first?.id() else { return }
        try addOne(to: "checkouts", for: id, connection)
    }

    /// Counts what a landing's checkout reached before the landing itself reached the tables: on SQLite a
    /// landing waits in the journal for a moment, and a checkout intent (or a purchase) recorded in that moment
    /// found no token row to count on. Called when the landing's new token is inserted.
    static func addStepsTakenBeforeIngestion(
        externalPurchaseId: ExternalPurchaseID,
        checkoutId: CheckoutID,
        into connection: any SQLConnection
    ) throws(StorageError) {
        let steps = try connection.query(
            """
            SELECT CASE WHEN EXISTS (SELECT 1 FROM checkout_intents WHERE checkout_id = ?) THEN 1 ELSE 0 END,
                CASE WHEN EXISTS (SELECT 1 FROM purchases WHERE external_purchase_id = ?) THEN 1 ELSE 0 END
            """,
            [.id(checkoutId), .id(externalPurchaseId)]
        )
        guard let row = steps.first else { return }
        if row[0].integer == 1 { try addOne(to: "checkouts", for: externalPurchaseId, connection) }
        if row[1].integer == 1 { try addOne(to: "payments", for: externalPurchaseId, connection) }
    }

    /// Counts the token as reported, if `at` is when its first report was accepted (`tokens.accepted_at`, which
    /// this sets, as the monthly close reads it): the token's row, locked by the update until the transaction
    /// ends, makes two acceptances at once count once.
    static func addAcceptedReport(
        for externalPurchaseId: ExternalPurchaseID,
        at: Int64,
        into connection: any SQLConnection
    )
        throws(StorageError)
    {
        let first = try connection.query(
            """
            UPDATE tokens SET accepted_at = ? WHERE external_purchase_id = ? AND accepted_at IS NULL
            RETURNING first_seen_at, environment, source
            """,
            [.integer(at), .id(externalPurchaseId)]
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
        externalPurchaseId: ExternalPurchaseID,
        dialect: SQLDialect,
        into connection: any SQLConnection
    ) throws(StorageError) {
        if let serialize = dialect.serializeOnKey {
            try connection.query(serialize, [.text("funnel-payment\u{0}" + externalPurchaseId.rawValue)])
        }
        let earlier = try connection.query(
            "SELECT purchase_id FROM purchases WHERE external_purchase_id = ? LIMIT 1",
            [.id(externalPurchaseId)]
        )
        guard earlier.isEmpty else { return }
        try addOne(to: "payments", for: externalPurchaseId, connection)
    }
}
