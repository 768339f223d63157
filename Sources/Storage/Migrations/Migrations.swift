import Domain

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
            // The report planner reads what may be due, not every token (issue: cost that does not grow with the
            // ledger). `report_queued_at` says when a token's first report was queued (set in the transaction
            // that queues it); a token without one is indexed by its creation date, apart by whether it waits
            // for the quiet time (a range up to `now - wait`; the tokens that may be due at once have their own
            // indexes, version 23). Line items no report carries yet are indexed by their token. Back-filled from
            // the reports there are.
            16,
            """
            ALTER TABLE tokens ADD COLUMN report_queued_at INTEGER;
            UPDATE tokens SET report_queued_at = (SELECT min(r.created_at) FROM reports r
                WHERE r.external_purchase_id = tokens.external_purchase_id);
            CREATE INDEX tokens_awaiting_quiet ON tokens(token_created_at)
                WHERE report_queued_at IS NULL AND report_due_at IS NULL
                    AND (token_type IS NULL OR token_type NOT IN ('ACQUISITION', 'SERVICES'));
            CREATE INDEX line_items_unreported ON line_items(external_purchase_id)
                WHERE report_request_identifier IS NULL AND held_since IS NULL AND correction IS NULL;
            """
        ),
        (
            // The money view (issue 21): one row per line item as Apple sees it now (its latest version not set
            // aside), with amounts in milli-units, the report carrying it, Apple's acceptance and the commission
            // estimate; and a daily roll-up, added to as rows change, so revenue over a year reads days, not
            // line items. Filled from the stored line items by `backfills[17]`.
            17,
            """
            CREATE TABLE money_line_items (
                environment TEXT NOT NULL,
                bundle_id TEXT NOT NULL,
                line_item_id TEXT NOT NULL,
                line_item_row INTEGER NOT NULL,
                external_purchase_id TEXT NOT NULL,
                creation_date INTEGER NOT NULL,
                event_type TEXT NOT NULL,
                product_id TEXT NOT NULL,
                product_type TEXT NOT NULL,
                subscription_event TEXT,
                quantity INTEGER,
                reference_line_item_id TEXT,
                amount_tax_inclusive INTEGER NOT NULL,
                amount_tax_exclusive INTEGER NOT NULL,
                tax_amount INTEGER NOT NULL,
                net_amount_tax_exclusive INTEGER NOT NULL,
                reporting_currency TEXT NOT NULL,
                pricing_currency TEXT NOT NULL,
                pricing_amount INTEGER NOT NULL,
                pricing_amount_source TEXT NOT NULL,
                exchange_rate TEXT,
                tax_country TEXT NOT NULL,
                provider TEXT NOT NULL,
                retracted INTEGER NOT NULL,
                held INTEGER NOT NULL,
                report_request_identifier TEXT,
                report_state TEXT,
                accepted_at INTEGER,
                regime_id TEXT,
                tap_at INTEGER,
                days_from_tap INTEGER,
                commissionable INTEGER NOT NULL,
                commission_basis_points INTEGER NOT NULL,
                commission INTEGER NOT NULL,
                PRIMARY KEY (environment, bundle_id, line_item_id)
            ) WITHOUT ROWID;
            CREATE INDEX money_line_items_date ON money_line_items(creation_date);
            CREATE INDEX money_line_items_row ON money_line_items(line_item_row);
            CREATE INDEX money_line_items_report ON money_line_items(report_request_identifier)
                WHERE report_request_identifier IS NOT NULL;
            CREATE TABLE money_daily (
                day INTEGER NOT NULL,
                bundle_id TEXT NOT NULL,
                environment TEXT NOT NULL,
                provider TEXT NOT NULL,
                product_id TEXT NOT NULL,
                tax_country TEXT NOT NULL,
                pricing_currency TEXT NOT NULL,
                reporting_currency TEXT NOT NULL,
                sales INTEGER NOT NULL,
                sales_amount INTEGER NOT NULL,
                sales_tax INTEGER NOT NULL,
                sales_pricing INTEGER NOT NULL,
                refunds INTEGER NOT NULL,
                refunds_amount INTEGER NOT NULL,
                refunds_tax INTEGER NOT NULL,
                refunds_pricing INTEGER NOT NULL,
                commission INTEGER NOT NULL,
                commissionable INTEGER NOT NULL,
                PRIMARY KEY (day, bundle_id, environment, provider, product_id, tax_country, pricing_currency,
                    reporting_currency)
            ) WITHOUT ROWID;
            """
        ),
        (
            // The monthly close (tokens created in a UTC month, line items dated in it, each accepted by Apple or
            // not): `accepted_at` on a token and a line item says when Apple first accepted a report carrying it,
            // kept when the report is accepted. A month's tokens and line items are read by ranges of these
            // covering indexes, never by a scan (a token's state before its report, from its type and dates, is
            // read from the index too: the table rows of a month's outstanding tokens are scattered); a line
            // item's `creation_date` (Apple's `creationDate`) is copied from its money row where it has one
            // (migration 17), and filled in by the close pass for rows written without it (`line_items_undated`
            // finds them).
            18,
            """
            ALTER TABLE tokens ADD COLUMN accepted_at INTEGER;
            UPDATE tokens SET accepted_at = (SELECT min(r.accepted_at) FROM reports r
                WHERE r.external_purchase_id = tokens.external_purchase_id AND r.state = 'accepted');
            CREATE INDEX tokens_close ON tokens(environment, token_created_at, accepted_at, token_type, token_expires_at,
                report_due_at);
            ALTER TABLE line_items ADD COLUMN creation_date INTEGER;
            UPDATE line_items SET creation_date = (SELECT m.creation_date FROM money_line_items m
                WHERE m.line_item_row = line_items.id);
            ALTER TABLE line_items ADD COLUMN accepted_at INTEGER;
            UPDATE line_items SET accepted_at = (SELECT r.accepted_at FROM reports r
                WHERE r.request_identifier = line_items.report_request_identifier AND r.state = 'accepted')
            WHERE correction IS NULL AND report_request_identifier IS NOT NULL;
            CREATE INDEX line_items_close ON line_items(creation_date, accepted_at, external_purchase_id);
            CREATE INDEX line_items_undated ON line_items(id) WHERE creation_date IS NULL;
            """
        ),
        (
            // The dashboard and the metrics read counts kept where the rows are written, not counted from every
            // row: per first-seen UTC day, environment and source, the tokens, those with a checkout intent, with
            // a purchase and with an accepted report (`token_days`, the dashboard's chart and funnel), and the
            // reports ever queued (`ledger_counts`). They change by additive updates only, in the transaction
            // that writes the rows, so instances writing at once stay exact. The tokens without an accepted report
            // (`accepted_at`, migration 18: the few not reported yet) are indexed by first sighting for the
            // oldest-unreported gauge. Both roll-ups are back-filled here. The token list pages
            // by first-seen time through an index, and a checkout's intents are found through theirs.
            // `tokens_refresh` holds only the types that can be duplicates (spec §3.4): a landing's token has no
            // type and paid for an entry no query reads.
            19,
            """
            CREATE INDEX checkout_intents_checkout ON checkout_intents(checkout_id);
            CREATE INDEX tokens_unaccepted ON tokens(first_seen_at) WHERE accepted_at IS NULL;
            CREATE TABLE token_days (
                day INTEGER NOT NULL,
                environment TEXT NOT NULL,
                source TEXT NOT NULL,
                tokens INTEGER NOT NULL,
                checkouts INTEGER NOT NULL DEFAULT 0,
                payments INTEGER NOT NULL DEFAULT 0,
                reported INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (day, environment, source)
            ) WITHOUT ROWID;
            INSERT INTO token_days (day, environment, source, tokens, checkouts, payments, reported)
                SELECT t.first_seen_at / \(Milliseconds.day), t.environment, t.source, count(*),
                    sum(CASE WHEN EXISTS (SELECT 1 FROM checkout_intents i WHERE i.checkout_id = t.checkout_id)
                        THEN 1 ELSE 0 END),
                    sum(CASE WHEN EXISTS (SELECT 1 FROM purchases p WHERE p.external_purchase_id = t.external_purchase_id)
                        THEN 1 ELSE 0 END),
                    sum(CASE WHEN t.accepted_at IS NOT NULL THEN 1 ELSE 0 END)
                FROM tokens t GROUP BY t.first_seen_at / \(Milliseconds.day), t.environment, t.source;
            CREATE TABLE ledger_counts (
                name TEXT PRIMARY KEY,
                n INTEGER NOT NULL
            ) WITHOUT ROWID;
            INSERT INTO ledger_counts (name, n) SELECT 'reports', count(*) FROM reports;
            CREATE INDEX tokens_first_seen ON tokens(first_seen_at, external_purchase_id);
            DROP INDEX tokens_refresh;
            CREATE INDEX tokens_refresh ON tokens(bundle_id, token_type, token_created_at, token_expires_at)
                WHERE token_type IN ('ACQUISITION', 'SERVICES');
            """
        ),
        (
            // The monthly close counts a month's line items and how many Apple accepted: from the index alone,
            // without a table lookup per line item.
            20,
            """
            CREATE INDEX money_line_items_acceptance ON money_line_items(creation_date, retracted, accepted_at);
            """
        ),
        (
            // The monthly close counts a month's line items as Apple sees them (one money row per line item, its
            // latest version) and reads the ones not accepted, per environment: from this index alone for the
            // count, and only the outstanding rows' table entries.
            21,
            """
            CREATE INDEX money_line_items_close ON money_line_items(environment, creation_date, accepted_at);
            """
        ),
        (
            // A buy's refunds are refreshed with it: they take its product, commission and pricing amount. The
            // index covers the query, or SQLite walks every row of the app through the primary key instead.
            22,
            """
            CREATE INDEX money_line_items_refunds ON money_line_items(environment, bundle_id, reference_line_item_id,
                event_type, external_purchase_id) WHERE reference_line_item_id IS NOT NULL;
            """
        ),
        (
            // The planner reads custom-link tokens by what is due, not all of them (issue: cost that does not
            // grow with the ledger): an app forwards one or two per install and each waits up to a year for its
            // expiry. Tokens Apple announced are indexed apart; unreported custom-link tokens by their expiry (a
            // range up to `now`), and in the order the duplicate check walks them, a window per pass
            // (`ReportStore.needingReportsCondition`). They replace `tokens_awaiting_other`, which a development
            // ledger from before them may still hold.
            23,
            """
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
        (
            // Apps without a backend: the keys that sign entitlements (a generated key keeps its private half
            // here, so every instance on one PostgreSQL ledger signs with the same key; a key read from a file
            // keeps only its public half, published until retired), and the customer credentials an app
            // checks its entitlements with (a keyed hash of each, never the credential) and what each covers.
            24,
            """
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
        (
            // The audit log: every action that changes what Apple, the provider or the developer's backend
            // receives, appended and never changed (triggers in `appendOnlyAuditLog` refuse updates and deletes).
            25,
            """
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
            """
        ),
        (
            // Privacy: when a person's data was taken out of a stored body (`linkout erase`, the retention pass of
            // `retention.personalDataDays`), and the bodies still holding it, by age, for that pass.
            26,
            """
            ALTER TABLE payment_events ADD COLUMN personal_data_erased_at INTEGER;
            ALTER TABLE webhook_deliveries ADD COLUMN personal_data_erased_at INTEGER;
            CREATE INDEX payment_events_personal_data ON payment_events(received_at)
                WHERE personal_data_erased_at IS NULL;
            CREATE INDEX webhook_deliveries_personal_data ON webhook_deliveries(created_at)
                WHERE personal_data_erased_at IS NULL;
            """
        ),
        (
            // A token is reported at its expiry when it carries one, whatever its type (`ReportingPolicy`): Japan's
            // and Brazil's custom-link tokens waited the quiet time as link-out tokens do and were reported
            // `NO_LINE_ITEM` while a purchase could still come in their active range. The planner's indexes are
            // rebuilt on the presence of an expiry instead of the type (the terms `ReportingPolicy+SQL` writes).
            27,
            """
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

    /// The schema version this release writes: its last migration's.
    static var latestVersion: Int64 { all.last?.version ?? 0 }

    /// Work a migration needs beyond SQL, run in its transaction after its SQL: version 17 fills the money rows
    /// and the daily roll-up from the line items already stored (no regime is in force yet; the server
    /// classifies them again when it starts with regimes, see `MoneyStore.useRegimes`); version 25 adds the
    /// audit log's triggers, which differ between the engines.
    static let backfills: [Int64: @Sendable (any SQLConnection, SQLDialect) throws(StorageError) -> Void] = [
        17: { connection, dialect throws(StorageError) in
            try MoneyRows.rebuild(in: connection, dialect: dialect, regimes: [])
        },
        25: { connection, dialect throws(StorageError) in
            try connection.execute(appendOnlyAuditLog(dialect))
        },
    ]

    /// The database itself refuses to change or remove an audit row, whatever client asks: the triggers are
    /// each engine's own language.
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
    /// `upTo`: the last version to apply (tests build the ledger an earlier release left, then upgrade it).
    static func apply(
        to connection: any SQLConnection,
        dialect: SQLDialect,
        now: Int64,
        upTo last: Int64 = .max
    ) throws(StorageError) {
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
        if let newest = applied.max(), newest > latestVersion {
            throw StorageError(
                .newerSchema,
                "the ledger's schema is version \(newest), migrated by a newer release; this release knows schema "
                    + "versions up to \(latestVersion): run that release again (see README \"Upgrades and rollbacks\")"
            )
        }
        for migration in all where !applied.contains(migration.version) && migration.version <= last {
            try connection.begin()
            do throws(StorageError) {
                try connection.execute(dialect.schema(migration.sql))
                try backfills[migration.version]?(connection, dialect)
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
