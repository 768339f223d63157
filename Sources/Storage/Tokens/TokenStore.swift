public import Domain

/// Tokens and what leads to them: landing visits, checkouts and the products chosen on them. Reads never wait for
/// writes (each runs on a pooled reader connection); writes return once committed.
public struct TokenStore: Sendable {
    let database: SQLDatabase
    /// Checkouts recorded but not yet in the tables, and the wait for them to get there.
    let visitRecorder: any VisitRecorder

    static let tokenColumns = """
        external_purchase_id, app_apple_id, bundle_id, token_type, token_created_at, token_expires_at, environment,
        source, app_account_token, first_seen_at, last_seen_at, visit_count, checkout_id
        """

    /// A row of `tokenColumns`.
    static func storedToken(_ row: [SQLValue]) throws(StorageError) -> StoredToken {
        // The environment column follows from the id (it is there for queries), but a value this version does not
        // know is still refused rather than read past.
        let _: Environment = try row[6].closedSet("tokens.environment")
        return StoredToken(
            token: ExternalPurchaseToken(
                appAppleId: row[1].integer ?? 0,
                bundleId: row[2].id() ?? "",
                tokenCreationDate: row[4].integer ?? 0,
                externalPurchaseId: row[0].id() ?? "",
                tokenType: row[3].text,
                tokenExpirationDate: row[5].integer
            ),
            source: try row[7].closedSet("tokens.source"),
            appAccountToken: row[8].text,
            firstSeenAt: row[9].integer ?? 0,
            lastSeenAt: row[10].integer ?? 0,
            visitCount: row[11].integer ?? 0,
            checkoutId: row[12].id() ?? ""
        )
    }

    /// The checkout behind `/checkout/{id}`; one whose visit is journaled but not yet ingested is found too. A
    /// token recorded before checkout ids led with a time keeps its one checkout under the older id, and a later
    /// landing's id (the time, then that id) leads to it: looked up first, so the page, its form, the payment and
    /// the admin views all stay with that checkout (a token has one checkout, so one payment).
    /// An id the token's later sighting carried (`CheckoutID.needsAlias`) leads to the token's checkout the same
    /// way, journaled or in the tables.
    public func checkout(id: CheckoutID) throws(StorageError) -> CheckoutRecord? {
        if let older = id.withoutTime, let record = try recorded(older) { return record }
        if let pending = visitRecorder.pendingCheckout(id) {
            guard let token = pending.externalPurchaseId, let stored = try storedCheckoutId(of: token),
                stored != id
            else { return pending }
            return try recorded(stored) ?? pending
        }
        return try recorded(id)
    }

    /// The checkout recorded under `id`, or the token's own when `id` is another way to it.
    private func recorded(_ id: CheckoutID) throws(StorageError) -> CheckoutRecord? {
        guard let (record, tokenCheckout) = try recordedRow(id) else { return nil }
        guard let tokenCheckout, tokenCheckout != record.id else { return record }
        return try recordedRow(tokenCheckout)?.record ?? record
    }

    private func recordedRow(_ id: CheckoutID) throws(StorageError) -> (
        record: CheckoutRecord, tokenCheckout: CheckoutID?
    )? {
        try database.readers.read { connection throws(StorageError) in
            let rows = try connection.query(
                """
                SELECT c.id, c.bundle_id, c.external_purchase_id, t.environment, t.token_expires_at, t.checkout_id
                FROM checkouts c LEFT JOIN tokens t ON t.external_purchase_id = c.external_purchase_id
                WHERE c.id = ?
                """,
                [.id(id)]
            )
            guard let row = rows.first, let id: CheckoutID = row[0].id(), let bundleId: BundleID = row[1].id()
            else { return nil }
            let record = CheckoutRecord(
                id: id,
                bundleId: bundleId,
                externalPurchaseId: row[2].id(),
                environment: try row[3].closedSetIfPresent("tokens.environment"),
                tokenExpiresAt: row[4].integer
            )
            return (record, row[5].id())
        }
    }

    /// The checkout id the token was first recorded with, if it is in the tables.
    private func storedCheckoutId(of token: ExternalPurchaseID) throws(StorageError) -> CheckoutID? {
        try database.readers.read { connection throws(StorageError) in
            try connection.query("SELECT checkout_id FROM tokens WHERE external_purchase_id = ?", [.id(token)])
                .first?.first?.id()
        }
    }

    /// Tokens in first-seen order, or with a `search` (the start of an externalPurchaseId) the matches in id
    /// order; `environment` filters, `after` starts after that token (keyset paging: a page costs its rows,
    /// wherever it is, where an offset costs every row before it). Without a search the order is
    /// `tokens_first_seen`'s; with one it is the primary key's, so a common prefix costs no more than a rare one.
    public func tokens(
        limit: Int = Int.max,
        offset: Int = 0,
        search: String? = nil,
        environment: Environment? = nil,
        after: TokenCursor? = nil
    ) throws(StorageError) -> [StoredToken] {
        try database.readers.read { connection throws(StorageError) in
            var conditions: [String] = []
            var parameters: [SQLValue] = []
            var order = "first_seen_at, external_purchase_id"
            let searching = !(search ?? "").isEmpty
            if let search, searching {
                // A prefix is a range of the primary key, read in its order: a page is the range's first rows at
                // any ledger size. In first-seen order every match was read and sorted before the first row.
                conditions.append("external_purchase_id >= ? AND external_purchase_id < ?")
                parameters += [.text(search), .text(search + "\u{10FFFF}")]
                order = "external_purchase_id"
            }
            if let environment {
                conditions.append("environment = ?")
                parameters.append(.text(environment.rawValue))
            }
            if let after, searching {
                conditions.append("external_purchase_id > ?")
                parameters.append(.id(after.externalPurchaseId))
            } else if let after {
                conditions.append("(first_seen_at, external_purchase_id) > (?, ?)")
                parameters += [.integer(after.firstSeenAt), .id(after.externalPurchaseId)]
            }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            parameters += [.integer(Int64(min(limit, Int(Int64.max)))), .integer(Int64(offset))]
            return try connection.query(
                "SELECT \(Self.tokenColumns) FROM tokens \(filter) ORDER BY \(order) LIMIT ? OFFSET ?",
                parameters
            ).decoded(Self.storedToken)
        }
    }

    /// The token; one the journal holds but the tables do not yet is waited for (briefly), so a token seen a
    /// moment ago is never reported unknown.
    public func token(_ externalPurchaseId: ExternalPurchaseID) throws(StorageError) -> StoredToken? {
        if let token = try storedToken(externalPurchaseId) { return token }
        guard visitRecorder.flushUnlessRefused(timeout: .seconds(2)) else { return nil }
        return try storedToken(externalPurchaseId)
    }

    private func storedToken(_ externalPurchaseId: ExternalPurchaseID) throws(StorageError) -> StoredToken? {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.tokenColumns) FROM tokens WHERE external_purchase_id = ?",
                [.id(externalPurchaseId)]
            ).firstDecoded(Self.storedToken)
        }
    }

    /// A token's visits (`TokenVisits`), oldest first. Parameters: the id three times, then the limit.
    static let visitsSQL =
        TokenVisits.select(
            visitColumns,
            token: "?",
            firstSeenAt: "(SELECT first_seen_at FROM tokens WHERE external_purchase_id = ?)"
        ) + " ORDER BY id LIMIT ?"

    private static let visitColumns =
        "visited_at, landing_path, checkout_id, \(Visit.utmParameterNames.joined(separator: ", ")), id"

    /// A token's landing visits, oldest first.
    public func visits(for externalPurchaseId: ExternalPurchaseID, limit: Int = 1000) throws(StorageError) -> [VisitRow]
    {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                Self.visitsSQL,
                [.id(externalPurchaseId), .id(externalPurchaseId), .id(externalPurchaseId), .integer(Int64(limit))]
            ).map { row in
                var utm: [String: String] = [:]
                for (index, name) in Visit.utmParameterNames.enumerated() {
                    if let value = row[3 + index].text { utm[name] = value }
                }
                return VisitRow(
                    visitedAt: row[0].integer ?? 0,
                    landingPath: row[1].text ?? "",
                    checkoutId: row[2].id() ?? "",
                    utm: utm
                )
            }
        }
    }

    /// The products chosen on a checkout's page, oldest first.
    public func checkoutIntents(checkoutId: CheckoutID) throws(StorageError) -> [CheckoutIntentRow] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT checkout_id, product_id, currency, amount, created_at FROM checkout_intents
                WHERE checkout_id = ? ORDER BY id
                """,
                [.id(checkoutId)]
            ).map { row in
                CheckoutIntentRow(
                    checkoutId: row[0].id() ?? "",
                    productId: row[1].id() ?? "",
                    currency: row[2].id() ?? "",
                    amount: row[3].text ?? "",
                    createdAt: row[4].integer ?? 0
                )
            }
        }
    }

    /// Counts rows of a table (tests and status output).
    package func count(_ table: CountableTable) throws(StorageError) -> Int64 {
        try database.readers.read { connection throws(StorageError) in
            try connection.query("SELECT count(*) FROM \(table.rawValue)").first?.first?.integer ?? 0
        }
    }
}
