extension Migrations {
    /// Versions 20 to 27: the close, apps without a backend, the audit trail, privacy and the expiry policy.
    static let versions20To27: [Migration] = [
        Migration(
            // The monthly close counts a month's line items and how many Apple accepted: from the index alone,
            // without a table lookup per line item.
            version: 20,
            name: "the close's acceptance index",
            sql: """
                CREATE INDEX money_line_items_acceptance ON money_line_items(creation_date, retracted, accepted_at);
                """
        ),
        Migration(
            // The monthly close counts a month's line items as Apple sees them (one money row per line item, its
            // latest version) and reads the ones not accepted, per environment: from this index alone for the
            // count, and only the outstanding rows' table entries.
            version: 21,
            name: "the close's index per environment",
            sql: """
                CREATE INDEX money_line_items_close ON money_line_items(environment, creation_date, accepted_at);
                """
        ),
        Migration(
            // A buy's refunds are refreshed with it: they take its product, commission and pricing amount. The
            // index covers the query, or SQLite walks every row of the app through the primary key instead.
            version: 22,
            name: "a buy's refunds index",
            sql: """
                CREATE INDEX money_line_items_refunds ON money_line_items(environment, bundle_id, reference_line_item_id,
                    event_type, external_purchase_id) WHERE reference_line_item_id IS NOT NULL;
                """
        ),
        Migration(
            // The planner reads custom-link tokens by what is due, not all of them (issue: cost that does not
            // grow with the ledger): an app forwards one or two per install and each waits up to a year for its
            // expiry. Tokens Apple announced are indexed apart; unreported custom-link tokens by their expiry (a
            // range up to `now`), and in the order the duplicate check walks them, a window per pass
            // (`ReportStore.needingReportsCondition`). They replace `tokens_awaiting_other`, which a development
            // ledger from before them may still hold.
            version: 23,
            name: "custom-link tokens by what is due",
            sql: """
                DROP INDEX IF EXISTS tokens_awaiting_other;
                CREATE INDEX tokens_awaiting_announced ON tokens(token_created_at)
                    WHERE report_queued_at IS NULL AND report_due_at IS NOT NULL;
                CREATE INDEX tokens_awaiting_expiry ON tokens(token_expires_at)
                    WHERE report_queued_at IS NULL AND report_due_at IS NULL
                        AND token_type IN ('ACQUISITION', 'SERVICES');
                CREATE INDEX tokens_custom_link_order ON tokens(token_created_at, external_purchase_id)
                    WHERE report_queued_at IS NULL AND token_type IN ('ACQUISITION', 'SERVICES');
                """
        ),
        Migration(
            // Apps without a backend: the keys that sign entitlements (a generated key keeps its private half
            // here, so every instance on one PostgreSQL ledger signs with the same key; a key read from a file
            // keeps only its public half, published until retired), and the customer credentials an app
            // checks its entitlements with (a keyed hash of each, never the credential) and what each covers.
            version: 24,
            name: "signing keys and customer credentials",
            sql: """
                CREATE TABLE signing_keys (
                    kid TEXT PRIMARY KEY,
                    public_jwk TEXT NOT NULL,
                    private_key TEXT,
                    created_at INTEGER NOT NULL,
                    signs_from INTEGER NOT NULL,
                    retired_at INTEGER
                ) WITHOUT ROWID;
                CREATE TABLE customer_credentials (
                    id TEXT PRIMARY KEY,
                    secret_hash TEXT NOT NULL UNIQUE,
                    bundle_id TEXT NOT NULL,
                    app_account_token TEXT,
                    created_at INTEGER NOT NULL,
                    revoked_at INTEGER,
                    replaced_by TEXT
                ) WITHOUT ROWID;
                CREATE TABLE credential_purchases (
                    credential_id TEXT NOT NULL,
                    purchase_id TEXT NOT NULL,
                    added_at INTEGER NOT NULL,
                    PRIMARY KEY (credential_id, purchase_id)
                ) WITHOUT ROWID;
                CREATE INDEX credential_purchases_purchase ON credential_purchases(purchase_id, credential_id);
                """
        ),
        Migration(
            // The audit log: every action that changes what Apple, the provider or the developer's backend
            // receives, appended and never changed (triggers in `appendOnlyAuditLog` refuse updates and deletes).
            version: 25,
            name: "the append-only audit log",
            sql: """
                CREATE TABLE audit_log (
                    id INTEGER PRIMARY KEY,
                    at INTEGER NOT NULL,
                    actor TEXT NOT NULL,
                    origin TEXT NOT NULL,
                    action TEXT NOT NULL,
                    subject TEXT,
                    before_state TEXT,
                    after_state TEXT
                );
                """,
            then: .forEngine(appendOnlyAuditLog)
        ),
        Migration(
            // Privacy: when a person's data was taken out of a stored body (`linkout erase`, the retention pass of
            // `retention.personalDataDays`), and the bodies still holding it, by age, for that pass.
            version: 26,
            name: "personal data erasure",
            sql: """
                ALTER TABLE payment_events ADD COLUMN personal_data_erased_at INTEGER;
                ALTER TABLE webhook_deliveries ADD COLUMN personal_data_erased_at INTEGER;
                CREATE INDEX payment_events_personal_data ON payment_events(received_at)
                    WHERE personal_data_erased_at IS NULL;
                CREATE INDEX webhook_deliveries_personal_data ON webhook_deliveries(created_at)
                    WHERE personal_data_erased_at IS NULL;
                """
        ),
        Migration(
            // A token is reported at its expiry when it carries one, whatever its type (`ReportingPolicy`): Japan's
            // and Brazil's custom-link tokens waited the quiet time as link-out tokens do and were reported
            // `NO_LINE_ITEM` while a purchase could still come in their active range. The planner's indexes are
            // rebuilt on the presence of an expiry instead of the type (the terms `ReportingPolicy+SQL` writes).
            version: 27,
            name: "every token with an expiry reported at it",
            sql: """
                DROP INDEX tokens_awaiting_quiet;
                CREATE INDEX tokens_awaiting_quiet ON tokens(token_created_at)
                    WHERE report_queued_at IS NULL AND report_due_at IS NULL AND token_expires_at IS NULL;
                DROP INDEX tokens_awaiting_expiry;
                CREATE INDEX tokens_awaiting_expiry ON tokens(token_expires_at)
                    WHERE report_queued_at IS NULL AND report_due_at IS NULL AND token_expires_at IS NOT NULL;
                DROP INDEX tokens_custom_link_order;
                CREATE INDEX tokens_custom_link_order ON tokens(token_created_at, external_purchase_id)
                    WHERE report_queued_at IS NULL AND token_expires_at IS NOT NULL;
                """
        ),
    ]
    /// Version 25's triggers: the database itself refuses to change or remove an audit row, whatever client asks.
    /// Each engine writes triggers in its own language.
    static func appendOnlyAuditLog(_ dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite:
            """
            CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
                BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
            CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
                BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
            """
        case .postgres:
            """
            CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION 'the audit log is append-only'; END $$;
            CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
                FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
            """
        }
    }
}
