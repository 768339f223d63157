import Domain

extension Migrations {
    /// Versions 13 to 19: notifications, the money view and the roll-ups.
    static let versions13To19: [Migration] = [
        Migration(
            // How far a notification history recovery got, per app, environment and window (Apple's App Store
            // Server API: "Get Notification History"): the pagination token of the next page, written after a page's
            // notifications are stored and acted on, so a failed run resumes there. NULL: this app and environment are
            // done; the window's rows go once every one is.
            version: 13,
            name: "notification history recovery",
            sql: """
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
        Migration(
            // Payment events held for an exchange rate are read in their order on every payment pass and dashboard
            // load; only the few held ones are indexed, so that read does not scan every payment event.
            version: 14,
            name: "held payment events in order",
            sql: """
                CREATE INDEX payment_events_held_order ON payment_events(received_at, provider, event_id)
                    WHERE held_reason IS NOT NULL;
                """
        ),
        Migration(
            // A provider that does not deliver in order (Paddle) says when each event happened and which
            // transaction or subscription it is about: that entity's events are acted on in the order they
            // happened. NULL for the others (Stripe), whose events are acted on as they arrived.
            version: 15,
            name: "provider events in the order they happened",
            sql: """
                ALTER TABLE payment_events ADD COLUMN occurred_at INTEGER;
                ALTER TABLE payment_events ADD COLUMN order_key TEXT;
                CREATE INDEX payment_events_order ON payment_events(provider, order_key, occurred_at)
                    WHERE processed_at IS NULL AND order_key IS NOT NULL;
                """
        ),
        Migration(
            // The report planner reads what may be due, not every token (issue: cost that does not grow with the
            // ledger). `report_queued_at` says when a token's first report was queued (set in the transaction
            // that queues it); a token without one is indexed by its creation date, apart by whether it waits
            // for the quiet time (a range up to `now - wait`; the tokens that may be due at once have their own
            // indexes, version 23). Line items no report carries yet are indexed by their token. Back-filled from
            // the reports there are.
            version: 16,
            name: "tokens queued for a report, and unreported line items",
            sql: """
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
        Migration(
            // The money view: one row per line item as Apple sees it now (its latest version not set
            // aside), with amounts in milli-units, the report carrying it, Apple's acceptance and the commission
            // estimate; and a daily roll-up, added to as rows change, so revenue over a year reads days, not
            // line items. Filled from the stored line items after the migrations, by this release's code
            // (`PostMigrationStep.rebuildMoneyRows`).
            version: 17,
            name: "the money view",
            sql: """
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
        Migration(
            // The monthly close (tokens created in a UTC month, line items dated in it, each accepted by Apple or
            // not): `accepted_at` on a token and a line item says when Apple first accepted a report carrying it,
            // kept when the report is accepted. A month's tokens and line items are read by ranges of these
            // covering indexes, never by a scan (a token's state before its report, from its type and dates, is
            // read from the index too: the table rows of a month's outstanding tokens are scattered); a line
            // item's `creation_date` (Apple's `creationDate`) is copied from its money row where it has one
            // (migration 17; when the money rows are made in the same upgrade, `PostMigrationStep.rebuildMoneyRows`
            // copies it once it has made them), and filled in by the close pass for rows written without it
            // (`line_items_undated` finds them).
            version: 18,
            name: "the monthly close's acceptance and creation dates",
            sql: """
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
        Migration(
            // The dashboard and the metrics read counts kept where the rows are written, not counted from every
            // row: per first-seen UTC day, environment and source, the tokens, those with a checkout intent, with
            // a purchase and with an accepted report (`token_days`, the dashboard's chart and funnel), and the
            // reports ever queued (`ledger_counts`). They change by additive updates only, in the transaction
            // that writes the rows, so instances writing at once stay exact. The tokens without an accepted report
            // (`accepted_at`, migration 18: the few not reported yet) are indexed by first sighting for the
            // oldest-unreported gauge. Both roll-ups are back-filled here. The token list pages
            // by first-seen time through an index, and a checkout's intents are found through theirs.
            // `tokens_refresh` holds only the types that can be duplicates (custom link tokens; Apple: "Testing
            // transactions that use custom link tokens"): a landing's token has no
            // type and paid for an entry no query reads.
            version: 19,
            name: "counts kept for the dashboard and the metrics",
            sql: """
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
    ]
}
