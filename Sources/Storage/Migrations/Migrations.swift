/// The schema, as numbered migrations applied in order at start-up. Never edit a released migration; add one.
enum Migrations {
    /// Version 1. Tables the landing path writes are WITHOUT ROWID where their key is text, so each insert
    /// touches one b-tree instead of a table and its key index; a visit costs four b-tree inserts at most.
    static let all: [(version: Int64, sql: String)] = [
        (
            1,
            """
            CREATE TABLE tokens (
                external_purchase_id TEXT PRIMARY KEY,
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
                visit_count INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE checkouts (
                id TEXT PRIMARY KEY,
                external_purchase_id TEXT,
                bundle_id TEXT NOT NULL,
                created_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE visits (
                id INTEGER PRIMARY KEY,
                checkout_id TEXT NOT NULL,
                external_purchase_id TEXT,
                visited_at INTEGER NOT NULL,
                landing_path TEXT NOT NULL,
                had_token INTEGER NOT NULL,
                utm_source TEXT,
                utm_medium TEXT,
                utm_campaign TEXT,
                utm_term TEXT,
                utm_content TEXT
            );
            CREATE INDEX visits_token ON visits(external_purchase_id);
            CREATE TABLE checkout_intents (
                id INTEGER PRIMARY KEY,
                checkout_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                currency TEXT NOT NULL,
                amount TEXT NOT NULL,
                created_at INTEGER NOT NULL
            );
            CREATE TABLE settings (
                name TEXT PRIMARY KEY,
                value TEXT NOT NULL
            ) WITHOUT ROWID;
            """
        ),
        (
            2,
            """
            CREATE TABLE line_items (
                id INTEGER PRIMARY KEY,
                external_purchase_id TEXT NOT NULL,
                line_item_id TEXT NOT NULL,
                body TEXT NOT NULL,
                received_at INTEGER NOT NULL,
                report_request_identifier TEXT
            );
            CREATE INDEX line_items_token ON line_items(external_purchase_id);
            CREATE TABLE reports (
                request_identifier TEXT PRIMARY KEY,
                external_purchase_id TEXT NOT NULL,
                environment TEXT NOT NULL,
                bundle_id TEXT NOT NULL,
                status TEXT NOT NULL,
                body TEXT NOT NULL,
                state TEXT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                last_attempt_at INTEGER,
                last_http_status INTEGER,
                last_response TEXT,
                accepted_at INTEGER
            ) WITHOUT ROWID;
            CREATE INDEX reports_token ON reports(external_purchase_id);
            CREATE INDEX reports_due ON reports(state, next_attempt_at);
            CREATE INDEX tokens_account ON tokens(app_account_token) WHERE app_account_token IS NOT NULL;
            """
        ),
        (
            3,
            """
            CREATE TABLE payment_sessions (
                session_id TEXT PRIMARY KEY,
                provider TEXT NOT NULL,
                intent_id TEXT NOT NULL UNIQUE,
                checkout_id TEXT NOT NULL,
                external_purchase_id TEXT,
                product_id TEXT NOT NULL,
                currency TEXT NOT NULL,
                amount TEXT NOT NULL,
                language TEXT NOT NULL,
                url TEXT NOT NULL,
                browser_hash TEXT,
                state TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE INDEX payment_sessions_checkout ON payment_sessions(checkout_id);
            CREATE INDEX payment_sessions_token ON payment_sessions(external_purchase_id)
                WHERE external_purchase_id IS NOT NULL;
            CREATE TABLE payment_events (
                provider TEXT NOT NULL,
                event_id TEXT NOT NULL,
                type TEXT NOT NULL,
                body TEXT NOT NULL,
                received_at INTEGER NOT NULL,
                processed_at INTEGER,
                outcome TEXT,
                next_attempt_at INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (provider, event_id)
            ) WITHOUT ROWID;
            CREATE INDEX payment_events_unprocessed ON payment_events(next_attempt_at) WHERE processed_at IS NULL;
            CREATE TABLE purchases (
                purchase_id TEXT PRIMARY KEY,
                provider TEXT NOT NULL,
                checkout_id TEXT,
                external_purchase_id TEXT,
                bundle_id TEXT,
                product_id TEXT,
                kind TEXT NOT NULL,
                status TEXT NOT NULL,
                currency TEXT NOT NULL,
                amount_total INTEGER NOT NULL,
                amount_tax INTEGER NOT NULL,
                tax_country TEXT NOT NULL,
                subscription_id TEXT,
                buy_line_item_id TEXT,
                period_end INTEGER,
                paid_days INTEGER NOT NULL DEFAULT 0,
                live INTEGER NOT NULL DEFAULT 1,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE INDEX purchases_token ON purchases(external_purchase_id);
            CREATE INDEX purchases_subscription ON purchases(subscription_id) WHERE subscription_id IS NOT NULL;
            CREATE TABLE purchase_charges (
                charge_key TEXT PRIMARY KEY,
                purchase_id TEXT NOT NULL,
                line_item_id TEXT NOT NULL,
                amount_total INTEGER NOT NULL,
                amount_tax INTEGER NOT NULL,
                amount_refunded INTEGER NOT NULL DEFAULT 0,
                created_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE INDEX purchase_charges_purchase ON purchase_charges(purchase_id);
            """
        ),
        (
            // Notifications (spec §6): stored before they are acknowledged, deduplicated by notificationUUID and
            // acted on exactly once. `tokens.report_due_at` marks a token Apple announced as unreported: its
            // report goes out at once, whatever the NO_LINE_ITEM wait or a payment hold say. Line item ids are
            // looked up across an app's tokens (Apple: a lineItemId "must be unique per app").
            4,
            """
            CREATE TABLE notifications (
                notification_uuid TEXT PRIMARY KEY,
                notification_type TEXT NOT NULL,
                subtype TEXT,
                external_purchase_id TEXT,
                environment TEXT,
                signed_date INTEGER NOT NULL,
                received_at INTEGER NOT NULL,
                source TEXT NOT NULL,
                signed_payload TEXT NOT NULL,
                processed_at INTEGER,
                outcome TEXT
            ) WITHOUT ROWID;
            CREATE INDEX notifications_unprocessed ON notifications(received_at) WHERE processed_at IS NULL;
            ALTER TABLE tokens ADD COLUMN report_due_at INTEGER;
            CREATE INDEX line_items_id ON line_items(line_item_id);
            """
        ),
        (
            5,
            """
            CREATE TABLE redemptions (
                code_hash TEXT PRIMARY KEY,
                purchase_id TEXT NOT NULL UNIQUE,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                redeemed_at INTEGER
            ) WITHOUT ROWID;
            CREATE TABLE webhook_deliveries (
                event_id TEXT PRIMARY KEY,
                purchase_id TEXT NOT NULL,
                sequence INTEGER NOT NULL,
                type TEXT NOT NULL,
                body TEXT NOT NULL,
                state TEXT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                last_attempt_at INTEGER,
                last_status INTEGER,
                last_error TEXT,
                delivered_at INTEGER
            ) WITHOUT ROWID;
            CREATE INDEX webhook_deliveries_due ON webhook_deliveries(state, next_attempt_at);
            CREATE INDEX webhook_deliveries_purchase ON webhook_deliveries(purchase_id, sequence);
            """
        ),
        (
            // Several instances on one database: an outbox row is sent by the instance that leased it, until the
            // lease ends (a crashed instance's work is taken over then). At most one open report per token is a
            // rule of the schema now, so two instances planning the same token cannot both queue one.
            6,
            """
            ALTER TABLE reports ADD COLUMN lease_owner TEXT;
            ALTER TABLE reports ADD COLUMN lease_until INTEGER;
            ALTER TABLE webhook_deliveries ADD COLUMN lease_owner TEXT;
            ALTER TABLE webhook_deliveries ADD COLUMN lease_until INTEGER;
            CREATE UNIQUE INDEX reports_one_open ON reports(external_purchase_id) WHERE state IN ('pending', 'rejected');
            """
        ),
        (
            // Several instances behind one balancer: the operator's dashboard session is valid on each (kept
            // here, by a keyed hash of its id, so a copy of the database holds no usable cookie). A purchase's
            // webhook positions are unique: instances adding to one purchase take turns, and the index makes
            // sure no two events ever share a position.
            7,
            """
            CREATE TABLE admin_sessions (
                session_key TEXT PRIMARY KEY,
                expires_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            DROP INDEX webhook_deliveries_purchase;
            CREATE UNIQUE INDEX webhook_deliveries_order ON webhook_deliveries(purchase_id, sequence);
            """
        ),
        (
            // Where a token's appAccountToken binding came from: `app` (POST /v1/tokens, unauthenticated) or
            // `backend` (POST /v1/backend/tokens, bearer). The backend's binding replaces the app's; a binding
            // made before this knew no source, and came from the app.
            8,
            """
            ALTER TABLE tokens ADD COLUMN app_account_source TEXT;
            UPDATE tokens SET app_account_source = 'app' WHERE app_account_token IS NOT NULL;
            """
        ),
        (
            // A processed payment event whose Apple line item waits for an exchange rate (apple-external-purchase.md
            // §5.5: the rate of the transaction's 48 hours): why, and for which token, so later line items of that
            // token wait behind it and the item is made once the rate arrives.
            9,
            """
            ALTER TABLE payment_events ADD COLUMN held_reason TEXT;
            ALTER TABLE payment_events ADD COLUMN held_token TEXT;
            CREATE INDEX payment_events_held ON payment_events(held_token);
            """
        ),
        (
            // Refreshed custom-link tokens (spec §3.4) share their app, type, creation and expiration dates:
            // the report planner looks them up by those to report the extra ones `DUPLICATE_TOKEN`.
            10,
            """
            CREATE INDEX tokens_refresh ON tokens(bundle_id, token_type, token_created_at, token_expires_at);
            """
        ),
        (
            // A line item no token of the customer can carry yet (a renewal after the purchase's custom-link
            // token expired, spec §3.4, §5.5) is held: stored, but on no report until a token active at its
            // `creationDate` is known. It then moves to that token.
            11,
            """
            ALTER TABLE line_items ADD COLUMN held_since INTEGER;
            CREATE INDEX line_items_held ON line_items(held_since) WHERE held_since IS NOT NULL;
            CREATE INDEX purchase_charges_line_item ON purchase_charges(line_item_id);
            """
        ),
        (
            // Apple's rejections (spec §5.6): a line item an error names is set aside with Apple's message
            // (`correction`) while the rest of its report goes again; it is never sent as it is, and once the
            // operator restates or drops it, `corrected_at` says when. Rejected reports are paged by their key.
            12,
            """
            ALTER TABLE line_items ADD COLUMN correction TEXT;
            ALTER TABLE line_items ADD COLUMN corrected_at INTEGER;
            CREATE INDEX line_items_needing_correction ON line_items(external_purchase_id)
                WHERE correction IS NOT NULL AND corrected_at IS NULL;
            CREATE INDEX reports_rejected ON reports(request_identifier) WHERE state = 'rejected';
            """
        ),
        (
            // How far a notification history recovery got, per app, environment and window (Get Notification
            // History, spec §6): the pagination token of the next page, written after a page's notifications are
            // stored and acted on, so a failed run resumes there. NULL: this app and environment are done; the
            // window's rows go once every one is.
            13,
            """
            CREATE TABLE history_recovery (
                bundle_id TEXT NOT NULL,
                environment TEXT NOT NULL,
                start_date INTEGER NOT NULL,
                end_date INTEGER NOT NULL,
                pagination_token TEXT,
                pages INTEGER NOT NULL,
                fetched INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                PRIMARY KEY (bundle_id, environment, start_date, end_date)
            ) WITHOUT ROWID;
            """
        ),
        (
            // Payment events held for an exchange rate are read in their order on every payment pass and dashboard
            // load; only the few held ones are indexed, so that read does not scan every payment event.
            14,
            """
            CREATE INDEX payment_events_held_order ON payment_events(received_at, provider, event_id)
                WHERE held_reason IS NOT NULL;
            """
        ),
        (
            // A provider that does not deliver in order (Paddle) says when each event happened and which
            // transaction or subscription it is about: that entity's events are acted on in the order they
            // happened. NULL for the others (Stripe), whose events are acted on as they arrived.
            15,
            """
            ALTER TABLE payment_events ADD COLUMN occurred_at INTEGER;
            ALTER TABLE payment_events ADD COLUMN order_key TEXT;
            CREATE INDEX payment_events_order ON payment_events(provider, order_key, occurred_at)
                WHERE processed_at IS NULL AND order_key IS NOT NULL;
            """
        ),
        (
            // The monthly close (tokens created in a UTC month, line items dated in it, each accepted by Apple or
            // not): `accepted_at` on a token and a line item says when Apple first accepted a report carrying it,
            // kept when the report is accepted. A month's tokens and line items are read by ranges of these
            // covering indexes, never by a scan (a token's state before its report, from its type and dates, is
            // read from the index too: the table rows of a month's outstanding tokens are scattered); a line item's `creation_date` (Apple's `creationDate`) is filled
            // in by the close pass for rows written without it (`line_items_undated` finds them).
            18,
            """
            ALTER TABLE tokens ADD COLUMN accepted_at INTEGER;
            UPDATE tokens SET accepted_at = (SELECT min(r.accepted_at) FROM reports r
                WHERE r.external_purchase_id = tokens.external_purchase_id AND r.state = 'accepted');
            CREATE INDEX tokens_close ON tokens(environment, token_created_at, accepted_at, token_type, token_expires_at,
                report_due_at);
            ALTER TABLE line_items ADD COLUMN creation_date INTEGER;
            ALTER TABLE line_items ADD COLUMN accepted_at INTEGER;
            UPDATE line_items SET accepted_at = (SELECT r.accepted_at FROM reports r
                WHERE r.request_identifier = line_items.report_request_identifier AND r.state = 'accepted')
            WHERE correction IS NULL AND report_request_identifier IS NOT NULL;
            CREATE INDEX line_items_close ON line_items(creation_date, accepted_at, external_purchase_id);
            CREATE INDEX line_items_undated ON line_items(id) WHERE creation_date IS NULL;
            """
        ),
    ]

    /// SQLite's two-argument `min` and `max` (the smaller or larger of two values), which the shared SQL uses;
    /// PostgreSQL calls them `LEAST` and `GREATEST` and has `min`/`max` only as aggregates of one argument.
    static let postgresFunctions = """
        CREATE OR REPLACE FUNCTION min(a BIGINT, b BIGINT) RETURNS BIGINT
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT LEAST(a, b)';
        CREATE OR REPLACE FUNCTION max(a BIGINT, b BIGINT) RETURNS BIGINT
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT GREATEST(a, b)';
        """

    /// A lock number of linkout's own: instances starting together take turns, so each migration runs once.
    static let advisoryLock: Int64 = 0x6C69_6E6B_6F75_74

    /// Applies the migrations not applied yet, each in its own transaction with its version row. On PostgreSQL
    /// under an advisory lock, so two instances starting together migrate once (the second finds them applied).
    static func apply(to connection: any SQLConnection, dialect: SQLDialect, now: Int64) throws(StorageError) {
        if dialect == .postgres { try connection.query("SELECT pg_advisory_lock(?)", [.integer(advisoryLock)]) }
        defer {
            if dialect == .postgres {
                _ = try? connection.query("SELECT pg_advisory_unlock(?)", [.integer(advisoryLock)])
            }
        }
        try connection.execute(
            dialect.schema(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)"
            )
        )
        if dialect == .postgres { try connection.execute(postgresFunctions) }
        let applied = Set(
            try connection.query("SELECT version FROM schema_migrations").compactMap { $0.first?.integer }
        )
        for migration in all where !applied.contains(migration.version) {
            try connection.begin()
            do throws(StorageError) {
                try connection.execute(dialect.schema(migration.sql))
                try connection.query(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    [.integer(migration.version), .integer(now)]
                )
                try connection.commit()
            } catch {
                try? connection.rollback()
                throw error
            }
        }
    }
}
