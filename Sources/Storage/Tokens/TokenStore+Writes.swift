public import Domain

/// Tokens, visits, checkouts and checkout intents: the writes of the landing and checkout paths.
extension TokenStore {
    /// Records a visit in the tables and returns once it is committed (the server records landings through
    /// `Ledger.recordVisit`, which acknowledges them sooner on SQLite).
    package func recordVisit(_ visit: Visit) throws(StorageError) -> RecordOutcome {
        try visitRecorder.recordInTables(visit)
    }

    /// Records a token the app forwarded (no visit), with its checkout; returns once committed. Its
    /// `appAccountToken`, if any, binds the token to that account as `AccountBinding` describes: the first binding
    /// holds against the app, and only a backend binding holds against the backend.
    public func recordForwardedToken(
        _ token: TokenFields,
        checkoutId: CheckoutID,
        at: Int64,
        bindingSource: AccountBindingSource = .app
    ) throws(StorageError) -> RecordOutcome {
        // The same token's landing still only journaled reaches the tables first: the landing recorded the token,
        // and a forward that overtook it would record it as the app's, seen later.
        waitForJournaledLanding(of: checkoutId)
        return try database.writer.write { connection throws(StorageError) in
            var tally = TokenDays.Tally()
            let upserted = try Self.upsert(
                token,
                checkoutId: checkoutId,
                countVisit: false,
                bindingSource: bindingSource,
                at: at,
                into: connection,
                tally: &tally
            )
            try tally.write(into: connection)
            if upserted.isNew || upserted.storedCheckout.map(checkoutId.needsAlias(forStored:)) == true {
                try Self.insertCheckout(
                    id: checkoutId,
                    token: token.token.externalPurchaseId,
                    bundleId: token.token.bundleId,
                    at: at,
                    into: connection
                )
            }
            return RecordOutcome(
                checkoutId: checkoutId,
                visitCount: 0,
                isNewToken: upserted.isNew,
                binding: upserted.binding
            )
        }
    }

    /// Records the product a person chose on a checkout page; returns the intent's id once committed.
    public func recordCheckoutIntent(
        checkoutId: CheckoutID,
        productId: ProductID,
        currency: CurrencyCode,
        amount: String,
        at: Int64
    ) throws(StorageError) -> Int64 {
        // The purchase that follows is made into money rows from the token's row.
        waitForJournaledLanding(of: checkoutId)
        return try database.writer.write { [dialect = database.dialect] connection throws(StorageError) in
            try TokenDays.addCheckoutIfFirstIntent(checkoutId: checkoutId, dialect: dialect, into: connection)
            let rows = try connection.query(
                """
                INSERT INTO checkout_intents (checkout_id, product_id, currency, amount, created_at)
                VALUES (?, ?, ?, ?, ?) RETURNING id
                """,
                [.id(checkoutId), .id(productId), .id(currency), .text(amount), .integer(at)]
            )
            return rows.first?.first?.integer ?? 0
        }
    }

    /// Lets a landing of `checkoutId` that is still only journaled (SQLite, a moment after the landing) reach the
    /// tables before a write that builds on it (briefly: a long backlog is not waited out).
    private func waitForJournaledLanding(of checkoutId: CheckoutID) {
        if visitRecorder.pendingCheckout(checkoutId) != nil { _ = visitRecorder.flush(timeout: .seconds(2)) }
    }

    /// The `visits` insert; its `utm_*` columns are named like `Visit.utmParameterNames`. The landing's inserts
    /// are `OR FAIL`, which spares SQLite a statement journal (`SQLDialect.statement(_:)`). `recorded_token` is 1
    /// for the visit that recorded its token, NULL for any other (migration 29 says why).
    private static let insertVisitSQL = """
        INSERT OR FAIL INTO visits (checkout_id, external_purchase_id, visited_at, landing_path, had_token, \
        recorded_token, \(Visit.utmParameterNames.joined(separator: ", ")))
        VALUES (?, ?, ?, ?, ?, ?\(String(repeating: ", ?", count: Visit.utmParameterNames.count)))
        """

    static func insert(_ visit: Visit, into connection: any SQLConnection) throws(StorageError) -> RecordOutcome {
        var tally = TokenDays.Tally()
        let outcome = try insert(visit, into: connection, tally: &tally)
        try tally.write(into: connection)
        return outcome
    }

    /// Writes a visit's rows; what they add to `token_days` goes to `tally`, for the caller to write once its
    /// visits are in (the journal's ingester writes a whole batch's at its end).
    static func insert(_ visit: Visit, into connection: any SQLConnection, tally: inout TokenDays.Tally)
        throws(StorageError) -> RecordOutcome
    {
        var visitCount: Int64 = 0
        // Tokenless visits always start a checkout; a token's checkout is created with its first visit, and a
        // later visit whose id differs gets a row that leads to it (`CheckoutID.needsAlias`).
        var isNew = visit.token == nil
        var needsAlias = false
        if let token = visit.token {
            let upserted = try upsert(
                token,
                checkoutId: visit.checkoutId,
                countVisit: true,
                at: visit.at,
                into: connection,
                tally: &tally
            )
            (isNew, visitCount) = (upserted.isNew, upserted.visitCount)
            needsAlias = upserted.storedCheckout.map(visit.checkoutId.needsAlias(forStored:)) ?? false
        }
        let checkoutId = visit.checkoutId
        if isNew || needsAlias {
            try insertCheckout(
                id: checkoutId,
                token: visit.token?.token.externalPurchaseId,
                bundleId: visit.bundleId,
                at: visit.at,
                into: connection
            )
            if isNew, let token = visit.token {
                tally.addIngestedLanding(externalPurchaseId: token.token.externalPurchaseId, checkoutId: checkoutId)
            }
        }
        let parameters: [SQLValue] = [
            .id(checkoutId), .optional(visit.token?.token.externalPurchaseId), .integer(visit.at),
            .text(visit.landingPath), .integer(visit.token == nil ? 0 : 1),
            isNew && visit.token != nil ? .integer(1) : .null,
        ]
        try connection.query(insertVisitSQL, parameters + Visit.utmParameterNames.map { .optional(visit.utm[$0]) })
        return RecordOutcome(checkoutId: checkoutId, visitCount: visitCount, isNewToken: isNew && visit.token != nil)
    }

    /// One row per externalPurchaseId: the first sighting inserts, later ones bump `last_seen_at` and the count
    /// and never change what the first recorded (only Apple's notification corrects that); an `appAccountToken`
    /// binds as `bind` decides. PostgreSQL's landings write the same rows for a whole batch in one statement of
    /// its own (`PostgresVisitWriter.batchSQL`), so a change here is made there too.
    private static func upsert(
        _ token: TokenFields,
        checkoutId: CheckoutID,
        countVisit: Bool,
        bindingSource: AccountBindingSource = .app,
        at: Int64,
        into connection: any SQLConnection,
        tally: inout TokenDays.Tally
    ) throws(StorageError) -> (isNew: Bool, visitCount: Int64, binding: AccountBinding, storedCheckout: CheckoutID?) {
        let increment: Int64 = countVisit ? 1 : 0
        let account = token.appAccountToken
        // The count of rows inserted says whether the token is new (its visit count is then `increment`).
        let inserted = try connection.change(
            """
            INSERT OR FAIL INTO tokens (external_purchase_id, checkout_id, raw_token, app_apple_id, bundle_id,
                token_type, token_created_at, token_expires_at, environment, source, app_account_token,
                app_account_source, first_seen_at, last_seen_at, visit_count)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(external_purchase_id) DO NOTHING
            """,
            [
                // The raw token is not kept: every field of it is in its own column, and nothing reads it back
                // (`raw_token` stays for older rows; see the README's "Disk per landing").
                .id(token.token.externalPurchaseId), .id(checkoutId), .text(""),
                .integer(token.token.appAppleId),
                .id(token.token.bundleId), .optional(token.token.tokenType), .integer(token.token.tokenCreationDate),
                .optional(token.token.tokenExpirationDate), .text(token.token.environment.rawValue),
                .text(token.source.rawValue),
                .optional(account),
                .optional(account == nil ? nil : bindingSource.rawValue), .integer(at), .integer(at),
                .integer(increment),
            ]
        )
        if inserted == 1 {
            tally.addToken(firstSeenAt: at, environment: token.token.environment, source: token.source)
            return (true, increment, account == nil ? .none : .bound, nil)
        }
        // On PostgreSQL the update also locks the row until the transaction ends, so the binding read here is
        // the one `bind` changes: two forwards at once take turns.
        let updated = try connection.query(
            """
            UPDATE tokens SET last_seen_at = max(last_seen_at, ?), visit_count = visit_count + ?
            WHERE external_purchase_id = ?
            RETURNING visit_count, app_account_token, app_account_source, checkout_id
            """,
            [.integer(at), .integer(increment), .id(token.token.externalPurchaseId)]
        )
        guard let row = updated.first, let count = row.first?.integer else {
            throw StorageError(.notFound, "token upsert found no row")
        }
        let storedCheckout: CheckoutID? = row[3].id()
        guard let account else { return (false, count, .none, storedCheckout) }
        let binding = try bind(
            token.token.externalPurchaseId,
            to: account,
            by: bindingSource,
            current: (row[1].text, try row[2].closedSetIfPresent("tokens.app_account_source")),
            connection
        )
        return (false, count, binding, storedCheckout)
    }

    /// Binds a known token to `account`. The first binding holds against the app (an unauthenticated caller may
    /// not move a customer's token to another account); the backend's binding replaces the app's, and holds
    /// against everyone but a later backend binding of the same account. Rows bound before bindings had a
    /// source count as the app's.
    private static func bind(
        _ externalPurchaseId: ExternalPurchaseID,
        to account: String,
        by source: AccountBindingSource,
        current: (account: String?, source: AccountBindingSource?),
        _ connection: any SQLConnection
    ) throws(StorageError) -> AccountBinding {
        let currentSource = current.source ?? .app
        let result: AccountBinding
        if let previous = current.account {
            let authoritative = source == .backend && currentSource == .app
            switch (previous == account, authoritative) {
            case (true, true): result = .unchanged  // the same account, now on the backend's word
            case (true, false): return .unchanged
            case (false, true): result = .replaced(previous: previous)
            case (false, false): return .conflict
            }
        } else {
            result = .bound
        }
        try connection.query(
            "UPDATE tokens SET app_account_token = ?, app_account_source = ? WHERE external_purchase_id = ?",
            [.text(account), .text(source.rawValue), .id(externalPurchaseId)]
        )
        return result
    }

    private static func insertCheckout(
        id: CheckoutID,
        token: ExternalPurchaseID?,
        bundleId: BundleID,
        at: Int64,
        into connection: any SQLConnection
    ) throws(StorageError) {
        try connection.query(
            """
            INSERT OR FAIL INTO checkouts (id, external_purchase_id, bundle_id, created_at) VALUES (?, ?, ?, ?)
            ON CONFLICT(id) DO NOTHING
            """,
            [.id(id), .optional(token), .id(bundleId), .integer(at)]
        )
    }
}
