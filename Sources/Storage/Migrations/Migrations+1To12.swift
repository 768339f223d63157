extension Migrations {
    /// Versions 1 to 12: the ledger, the outbox, payments and the planner's first indexes. Version 1: tables the
    /// landing path writes are WITHOUT ROWID where their key is text, so each insert touches one b-tree instead
    /// of a table and its key index; a visit costs four b-tree inserts at most.
    static let versions1To12: [Migration] = [
        Migration(
            version: 1,
            name: "tokens, checkouts, visits, checkout intents and settings",
            sql: """
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
        Migration(
            version: 2,
            name: "line items and the report outbox",
            sql: """
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
        Migration(
            version: 3,
            name: "payment sessions, provider events, purchases and their charges",
            sql: """
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
        Migration(
            // App Store Server Notifications: stored before they are acknowledged, deduplicated by notificationUUID and
            // acted on exactly once. `tokens.report_due_at` marks a token Apple announced as unreported: its
            // report goes out at once, whatever the NO_LINE_ITEM wait or a payment hold say. Line item ids are
            // looked up across an app's tokens (Apple: a lineItemId "must be unique per app").
            version: 4,
            name: "App Store Server Notifications and the tokens Apple announces",
            sql: """
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
        Migration(
            version: 5,
            name: "redemption codes and the entitlement webhook outbox",
            sql: """
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
        Migration(
            // Several instances on one database: an outbox row is sent by the instance that leased it, until the
            // lease ends (a crashed instance's work is taken over then). At most one open report per token is a
            // rule of the schema now, so two instances planning the same token cannot both queue one.
            version: 6,
            name: "outbox leases for several instances",
            sql: """
                ALTER TABLE reports ADD COLUMN lease_owner TEXT;
                ALTER TABLE reports ADD COLUMN lease_until INTEGER;
                ALTER TABLE webhook_deliveries ADD COLUMN lease_owner TEXT;
                ALTER TABLE webhook_deliveries ADD COLUMN lease_until INTEGER;
                CREATE UNIQUE INDEX reports_one_open ON reports(external_purchase_id) WHERE state IN ('pending', 'rejected');
                """
        ),
        Migration(
            // Several instances behind one balancer: the operator's dashboard session is valid on each (kept
            // here, by a keyed hash of its id, so a copy of the database holds no usable cookie). A purchase's
            // webhook positions are unique: instances adding to one purchase take turns, and the index makes
            // sure no two events ever share a position.
            version: 7,
            name: "shared admin sessions and unique webhook positions",
            sql: """
                CREATE TABLE admin_sessions (
                    session_key TEXT PRIMARY KEY,
                    expires_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                DROP INDEX webhook_deliveries_purchase;
                CREATE UNIQUE INDEX webhook_deliveries_order ON webhook_deliveries(purchase_id, sequence);
                """
        ),
        Migration(
            // Where a token's appAccountToken binding came from: `app` (POST /v1/tokens, unauthenticated) or
            // `backend` (POST /v1/backend/tokens, bearer). The backend's binding replaces the app's; a binding
            // made before this knew no source, and came from the app.
            version: 8,
            name: "where an account binding came from",
            sql: """
                ALTER TABLE tokens ADD COLUMN app_account_source TEXT;
                UPDATE tokens SET app_account_source = 'app' WHERE app_account_token IS NOT NULL;
                """
        ),
        Migration(
            // A processed payment event whose Apple line item waits for an exchange rate (Apple: "exchangeRate",
            // the rate of the transaction's 48 hours): why, and for which token, so later line items of that token
            // wait behind it and the item is made once the rate arrives.
            version: 9,
            name: "payment events held for an exchange rate",
            sql: """
                ALTER TABLE payment_events ADD COLUMN held_reason TEXT;
                ALTER TABLE payment_events ADD COLUMN held_token TEXT;
                CREATE INDEX payment_events_held ON payment_events(held_token);
                """
        ),
        Migration(
            // Refreshed custom-link tokens (Apple: "Testing transactions that use custom link tokens") share their app,
            // type, creation and expiration dates: the report planner looks them up by those to report the extra ones
            // `DUPLICATE_TOKEN`.
            version: 10,
            name: "refreshed custom-link tokens by their dates",
            sql: """
                CREATE INDEX tokens_refresh ON tokens(bundle_id, token_type, token_created_at, token_expires_at);
                """
        ),
        Migration(
            // A line item no token of the customer can carry yet (a renewal after the purchase's custom-link
            // token expired; Apple: LineItemCreationDateOutOfRangeError) is held: stored, but on no report until a
            // token active at its `creationDate` is known. It then moves to that token.
            version: 11,
            name: "line items held for a token",
            sql: """
                ALTER TABLE line_items ADD COLUMN held_since INTEGER;
                CREATE INDEX line_items_held ON line_items(held_since) WHERE held_since IS NOT NULL;
                CREATE INDEX purchase_charges_line_item ON purchase_charges(line_item_id);
                """
        ),
        Migration(
            // Apple's rejections (Apple: "SendReportErrorResponse"): a line item an error names is set aside with
            // Apple's message (`correction`) while the rest of its report goes again; it is never sent as it is, and
            // once the operator restates or drops it, `corrected_at` says when. Rejected reports are paged by their
            // key.
            version: 12,
            name: "Apple's rejections set aside for correction",
            sql: """
                ALTER TABLE line_items ADD COLUMN correction TEXT;
                ALTER TABLE line_items ADD COLUMN corrected_at INTEGER;
                CREATE INDEX line_items_needing_correction ON line_items(external_purchase_id)
                    WHERE correction IS NOT NULL AND corrected_at IS NULL;
                CREATE INDEX reports_rejected ON reports(request_identifier) WHERE state = 'rejected';
                """
        ),
    ]
}
