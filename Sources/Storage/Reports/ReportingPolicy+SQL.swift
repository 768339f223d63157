import Domain

/// `ReportingPolicy`'s conditions as SQL on a `tokens` row under an alias, so the ledger's queries and the Swift
/// checks read the same rule. The planner's partial indexes (`tokens_awaiting_quiet`, `tokens_awaiting_expiry`,
/// `tokens_custom_link_order`, `tokens_refresh`) are written with these terms, since SQLite uses a partial
/// index only for a query that names its condition: changing a term here takes a migration that rebuilds them.
extension ReportingPolicy {
    enum SQL {
        /// A token reported at its expiry (or with line items): one that carries an expiry.
        static func isReportedAtExpiry(_ alias: String) -> String { "\(alias).token_expires_at IS NOT NULL" }

        /// A token reported `NO_LINE_ITEM` after the quiet wait: one without an expiry.
        static func waitsQuietTime(_ alias: String) -> String { "\(alias).token_expires_at IS NULL" }

        /// When Apple sends `UNREPORTED` for the token if it has no report: at its expiry for a custom-link token,
        /// `unreportedNoticeMilliseconds` after its creation for any other (`AttentionEntry.noticeAt`).
        /// Saturating, as the Swift side: a token from Apple's notification carries whatever creation date it
        /// carries, and past the largest integer PostgreSQL refuses the sum (SQLite would turn it into a real).
        static func unreportedNoticeAt(_ alias: String) -> String {
            let latest = Int64.max - unreportedNoticeMilliseconds
            return "coalesce(\(alias).token_expires_at, CASE WHEN \(alias).token_created_at > \(latest) "
                + "THEN \(Int64.max) ELSE \(alias).token_created_at + \(unreportedNoticeMilliseconds) END)"
        }

        /// A token with a sale Apple is told of (`isSaleForApple`) that is no line item: linkout could not make
        /// one of it (a payment link made by hand without a product, say; `AppleLineItemError`), and a person
        /// posts it (`POST /v1/tokens/{id}/line-items`) or reports the token otherwise. Until then the token is not
        /// `NO_LINE_ITEM`: Apple would hear that nobody paid.
        static func hasSaleWithoutLineItem(_ alias: String) -> String {
            """
            EXISTS (SELECT 1 FROM purchases p WHERE p.external_purchase_id = \(alias).external_purchase_id
                AND p.buy_line_item_id IS NULL
                AND (p.live <> 0 OR \(alias).environment = '\(Environment.sandbox.rawValue)'))
            """
        }

        /// A token of a type that may be reported `DUPLICATE_TOKEN`.
        static func mayBeDuplicate(_ alias: String) -> String {
            "\(alias).token_type IN (\(customLinkTypes.map { "'\($0)'" }.joined(separator: ", ")))"
        }

        /// A token with an expiry whose active range is over. Parameter: now.
        static func hasExpired(_ alias: String) -> String { "\(alias).token_expires_at < ?" }

        /// A token with an expiry still in its active range's end. Parameter: now (or the SQL `moment` names).
        static func hasNotExpired(_ alias: String, at moment: String = "?") -> String {
            "\(alias).token_expires_at >= \(moment)"
        }

        /// A token with an expiry whose active range holds a moment. Parameters: the moment, twice; or none when
        /// `moment` is SQL naming it (a column of another row).
        static func isActive(_ alias: String, at moment: String = "?") -> String {
            "(\(isReportedAtExpiry(alias)) AND \(alias).token_created_at <= \(moment) AND "
                + "\(hasNotExpired(alias, at: moment)))"
        }
    }
}
