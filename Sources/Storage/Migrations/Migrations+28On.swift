extension Migrations {
    /// Versions 28 on: the landing's tables and indexes kept off random pages.
    static let versions28On: [Migration] = [
        Migration(
            // Apple's externalPurchaseId is a UUID, and a checkout's id an HMAC: random keys. Kept WITHOUT ROWID
            // (version 1), each new token put its whole row, and each checkout its row, into a random leaf of a
            // table that grows with the ledger, and every token index carried the 36-character id; a batch of
            // landings dirtied a page per token in each, all written to the WAL and again at the checkpoint. As
            // rowid tables the rows go to the end, in landing order, and only a small entry (the id and the rowid)
            // goes to a random leaf of the id's index. `tokens_close` names the id as its last column, as the old
            // table's indexes carried it: the close lists a month's outstanding tokens from the index alone, where
            // a rowid entry would cost a lookup in the table per token. PostgreSQL keeps rows in heaps already.
            // The tables are copied in id order (so the id index is written in order), then the indexes are built: a
            // ledger of a million tokens takes about 8 s and 150 MB of memory (the old indexes' pages, journaled as
            // they are freed), and the database file keeps the old tables' space as free pages, reused as it grows.
            version: 28,
            name: "tokens and checkouts as rowid tables",
            steps: [.forEngine(tokensAndCheckoutsByRowid)]
        ),
        Migration(
            // A token's visits were found through `visits_token`, every visit by its externalPurchaseId: a random
            // key, so each landing put an entry into a random page of an index as large as the ledger, written to
            // the WAL and again at the checkpoint. Most visits are the one that recorded their token (its first
            // sighting, at its `first_seen_at`); those are marked and found by their time (`visits_recorded`, in
            // landing order), and only the others keep an entry by id (`visits_token_later`). Rows from before
            // have no mark, so they are in that index too. On SQLite that index is built, and the old one dropped,
            // after the migration (`afterMigrating`).
            version: 29,
            name: "a token's first visit found by its time",
            sql: """
                ALTER TABLE visits ADD COLUMN recorded_token INTEGER;
                CREATE INDEX visits_recorded ON visits(visited_at) WHERE recorded_token = 1;
                """,
            then: .forEngine { dialect in
                guard dialect == .postgres else { return "SELECT 1" }
                return """
                    CREATE INDEX visits_token_later ON visits(external_purchase_id) WHERE recorded_token IS NULL;
                    DROP INDEX visits_token;
                    """
            }
        ),
    ]

    /// Schema work on SQLite after the migrations, each statement a transaction of its own, on every start that
    /// finds it still needed (`needed` returns a row), so a crash before it leaves it for the next start. Inside
    /// a migration's transaction SQLite keeps a copy of every page a statement frees or reuses, in memory, to undo
    /// that statement alone: dropping version 28's old tables took memory the size of both, and building an
    /// index over every visit would reuse the pages they freed.
    static let afterMigrating: [(needed: String, statement: String)] = [
        (sqliteHas("table", "tokens_by_id"), "DROP TABLE tokens_by_id"),
        (sqliteHas("table", "checkouts_by_id"), "DROP TABLE checkouts_by_id"),
        // The old index goes only once the new one is there.
        (
            "SELECT 1 WHERE NOT EXISTS (\(sqliteHas("index", "visits_token_later")))",
            "CREATE INDEX visits_token_later ON visits(external_purchase_id) WHERE recorded_token IS NULL"
        ),
        (
            sqliteHas("index", "visits_token") + " AND EXISTS (\(sqliteHas("index", "visits_token_later")))",
            "DROP INDEX visits_token"
        ),
    ]

    private static func sqliteHas(_ type: String, _ name: String) -> String {
        "SELECT 1 FROM sqlite_master WHERE type = '\(type)' AND name = '\(name)'"
    }

    /// Version 28's rebuild, on SQLite; PostgreSQL has nothing to rebuild.
    static func tokensAndCheckoutsByRowid(_ dialect: SQLDialect) -> String {
        guard dialect == .sqlite else { return "SELECT 1" }
        let tokenColumns = """
            external_purchase_id, checkout_id, raw_token, app_apple_id, bundle_id, token_type, token_created_at,
                token_expires_at, environment, source, app_account_token, first_seen_at, last_seen_at, visit_count,
                report_due_at, app_account_source, report_queued_at, accepted_at
            """
        // The old token indexes go first (their names are taken again below), and the old tables only after the
        // migration, outside its transaction (`afterMigrating`): a statement inside a transaction keeps
        // every page it frees or reuses in its statement journal, in memory, and dropping the old tables here
        // took memory the size of both. OR FAIL: a statement that cannot abort halfway keeps no statement journal
        // at all (a failure still fails the migration, and its transaction rolls back).
        return """
            DROP INDEX tokens_account;
            DROP INDEX tokens_close;
            DROP INDEX tokens_unaccepted;
            DROP INDEX tokens_first_seen;
            DROP INDEX tokens_refresh;
            DROP INDEX tokens_awaiting_announced;
            DROP INDEX tokens_awaiting_quiet;
            DROP INDEX tokens_awaiting_expiry;
            DROP INDEX tokens_custom_link_order;
            ALTER TABLE tokens RENAME TO tokens_by_id;
            ALTER TABLE checkouts RENAME TO checkouts_by_id;
            CREATE TABLE tokens (
                external_purchase_id TEXT NOT NULL PRIMARY KEY,
                checkout_id TEXT NOT NULL,
                raw_token TEXT NOT NULL,
                app_apple_id INTEGER NOT NULL,
                bundle_id TEXT NOT NULL,
                token_type TEXT,
                token_created_at INTEGER NOT NULL,
                token_expires_at INTEGER,
                environment TEXT NOT NULL,
                source TEXT NOT NULL,
                app_account_token TEXT,
                first_seen_at INTEGER NOT NULL,
                last_seen_at INTEGER NOT NULL,
                visit_count INTEGER NOT NULL,
                report_due_at INTEGER,
                app_account_source TEXT,
                report_queued_at INTEGER,
                accepted_at INTEGER
            );
            CREATE TABLE checkouts (
                id TEXT NOT NULL PRIMARY KEY,
                external_purchase_id TEXT,
                bundle_id TEXT NOT NULL,
                created_at INTEGER NOT NULL
            );
            INSERT OR FAIL INTO tokens (\(tokenColumns))
                SELECT \(tokenColumns) FROM tokens_by_id ORDER BY external_purchase_id;
            INSERT OR FAIL INTO checkouts (id, external_purchase_id, bundle_id, created_at)
                SELECT id, external_purchase_id, bundle_id, created_at FROM checkouts_by_id ORDER BY id;
            CREATE INDEX tokens_account ON tokens(app_account_token) WHERE app_account_token IS NOT NULL;
            CREATE INDEX tokens_close ON tokens(environment, token_created_at, accepted_at, token_type, token_expires_at,
                report_due_at, external_purchase_id);
            CREATE INDEX tokens_unaccepted ON tokens(first_seen_at) WHERE accepted_at IS NULL;
            CREATE INDEX tokens_first_seen ON tokens(first_seen_at, external_purchase_id);
            CREATE INDEX tokens_refresh ON tokens(bundle_id, token_type, token_created_at, token_expires_at)
                WHERE token_type IN ('ACQUISITION', 'SERVICES');
            CREATE INDEX tokens_awaiting_announced ON tokens(token_created_at)
                WHERE report_queued_at IS NULL AND report_due_at IS NOT NULL;
            CREATE INDEX tokens_awaiting_quiet ON tokens(token_created_at)
                WHERE report_queued_at IS NULL AND report_due_at IS NULL AND token_expires_at IS NULL;
            CREATE INDEX tokens_awaiting_expiry ON tokens(token_expires_at)
                WHERE report_queued_at IS NULL AND report_due_at IS NULL AND token_expires_at IS NOT NULL;
            CREATE INDEX tokens_custom_link_order ON tokens(token_created_at, external_purchase_id)
                WHERE report_queued_at IS NULL AND token_expires_at IS NOT NULL;
            """
    }
}
