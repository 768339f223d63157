public import Domain

/// What the report planner reads: the tokens due a report, the duplicate window, and the conditions behind them
/// (`ReportingPolicy+SQL` writes Apple's rules into them).
extension ReportStore {
    /// SQL true when the token in `t` is an extra custom-link token of its customer (Apple: "Reporting
    /// unrecognized tokens and tokens without transactions"), to be reported `DUPLICATE_TOKEN`. Only
    /// `ACQUISITION`/`SERVICES` tokens without line items qualify (Apple refuses the status for any other type:
    /// `DuplicateTokenStatusNotAllowedError`). Its siblings are tokens of the same app, environment and type that are
    /// either
    /// - refreshed copies of it, as Apple describes them: "same creation and expiration dates as the original
    ///   token, but a different externalPurchaseId" (no `appAccountToken` needed, so tokens learned from a
    ///   `CREATED` notification or a landing are grouped too; two tokens that name different accounts are not),
    /// - or tokens of the same `appAccountToken` whose active ranges overlap.
    /// Of a group, the token transactions are reported on is the first with line items, else the first seen;
    /// every other one is the duplicate. A sibling already reported `DUPLICATE_TOKEN` never counts as that one.
    /// While a line item of the token's customer is held for a token (`LineItemPlacement`) and dated in the token's
    /// active range (or not dated yet), the token is not yet judged (checked last, and only for a token with an
    /// account, the only kind an item is placed on; held items are few, through `line_items_held`): the next pass
    /// may place the item on it, which makes it the one that carries transactions (judged before that, by a pass
    /// already planning when the app forwarded it, it was reported `DUPLICATE_TOKEN` and the held item could never
    /// go on it). An item dated outside the token's range can never go on it (Apple refuses it there:
    /// `LineItemCreationDateOutOfRangeError`), so it does not hold the judgement: one held for good (it falls
    /// between two of the customer's tokens) kept every later token of the customer from being judged.
    /// A token with a payment under way (`PaymentsUnderWay`) is no duplicate of a sibling that was merely seen
    /// first: paid, it carries its customer's transactions (judged before, it was told to Apple as a duplicate and
    /// then sent its sale). Its parameters: `PaymentsUnderWay.parameters`, twice.
    static let isDuplicateToken = """
        (\(ReportingPolicy.SQL.mayBeDuplicate("t"))
            AND NOT EXISTS (SELECT 1 FROM line_items tl WHERE tl.external_purchase_id = t.external_purchase_id)
            AND (\(primarySibling(where: """
                s.token_created_at = t.token_created_at AND s.token_expires_at = t.token_expires_at
                AND (s.app_account_token IS NULL OR t.app_account_token IS NULL
                    OR s.app_account_token = t.app_account_token)
                """))
            OR \(primarySibling(where: """
                s.app_account_token = t.app_account_token
                AND s.token_created_at <= COALESCE(t.token_expires_at, 9223372036854775807)
                AND t.token_created_at <= COALESCE(s.token_expires_at, 9223372036854775807)
                """)))
            AND (t.app_account_token IS NULL OR NOT EXISTS (SELECT 1 FROM line_items held JOIN tokens owner
                ON owner.external_purchase_id = held.external_purchase_id
                WHERE held.held_since IS NOT NULL AND owner.app_account_token = t.app_account_token
                  AND (held.creation_date IS NULL OR \(ReportingPolicy.SQL.isActive("t", at: "held.creation_date"))))))
        """

    /// SQL true when a token `s` of the same app, environment and type as `t`, matching `condition`, is the one
    /// transactions are reported on rather than `t`: it has line items, or was seen first; one reported
    /// `DUPLICATE_TOKEN` never is. Two lookups (refreshed copy, same account) rather than one with an OR, so each
    /// uses its index (`tokens_refresh`, `tokens_account`). The type's set is repeated (`t`'s is in it already)
    /// so the lookup may use `tokens_refresh`, which holds only the types that can be duplicates.
    static func primarySibling(where condition: String) -> String {
        """
        EXISTS (SELECT 1 FROM tokens s WHERE \(condition)
            AND s.bundle_id = t.bundle_id AND s.app_apple_id = t.app_apple_id
            AND s.environment = t.environment AND s.token_type = t.token_type
            AND \(ReportingPolicy.SQL.mayBeDuplicate("s"))
            AND s.external_purchase_id <> t.external_purchase_id
            AND NOT EXISTS (SELECT 1 FROM reports d WHERE d.external_purchase_id = s.external_purchase_id
                AND d.status = 'DUPLICATE_TOKEN')
            AND (EXISTS (SELECT 1 FROM line_items sl WHERE sl.external_purchase_id = s.external_purchase_id)
                OR ((s.first_seen_at < t.first_seen_at
                    OR (s.first_seen_at = t.first_seen_at AND s.external_purchase_id < t.external_purchase_id))
                    AND NOT \(paymentUnderWay))))
        """
    }

    /// SQL true while a payment on `t` may still complete (`PaymentsUnderWay`: now, open since, pending since),
    /// on a token Apple has not announced and that has not expired (a notice or the expiry ends the wait).
    static let paymentUnderWay = """
        (t.report_due_at IS NULL AND t.token_expires_at > ? AND EXISTS (SELECT 1 FROM payment_sessions ps
            WHERE ps.external_purchase_id = t.external_purchase_id
            AND ((ps.state = 'open' AND ps.created_at > ?) OR (ps.state = 'pending' AND ps.updated_at > ?))))
        """

    /// Tokens that need a new report: line items not yet in any report, or no report at all and no line items:
    /// a token without an expiry created before `quietSince` and with no payment that may still complete, a
    /// custom-link token once it expired or as a duplicate, any token Apple announced as unreported. Tokens
    /// with an open (pending or rejected) report are left out: one report at a time per token.
    public func tokensNeedingReports(
        now: Int64,
        quietSince: Int64,
        paymentsOpenSince: Int64,
        paymentsPendingSince: Int64,
        holdsEndForTokensCreatedBefore: Int64,
        duplicateWindow: DuplicateWindow,
        paymentsUnderWay: PaymentsUnderWay = .none,
        limit: Int
    ) throws(StorageError) -> [StoredToken] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(TokenStore.tokenColumns) FROM tokens t \(Self.needingReportsCondition)",
                [.integer(quietSince), .integer(now)] + duplicateWindow.parameters + [
                    .integer(quietSince), .integer(holdsEndForTokensCreatedBefore),
                    .integer(paymentsOpenSince), .integer(paymentsPendingSince), .integer(now),
                    .integer(paymentsOpenSince),
                ] + paymentsUnderWay.parameters + paymentsUnderWay.parameters + [.integer(Int64(limit))]
            ).decoded(TokenStore.storedToken)
        }
    }

    /// The next `size` custom-link tokens without a report after `after`, in the order of
    /// `tokens_custom_link_order`: the window of unexpired ones a planner pass checks for duplicates. When none
    /// follows `after` the window starts at the start again, so a pass never checks nothing while some wait.
    public func duplicateWindow(after: CustomLinkKey?, size: Int) throws(StorageError) -> DuplicateWindow {
        try database.readers.read { connection throws(StorageError) in
            var keys = try Self.customLinkKeys(connection, after: after ?? .start, size: size)
            var start = after
            if keys.isEmpty, after != nil {
                keys = try Self.customLinkKeys(connection, after: .start, size: size)
                start = nil
            }
            return DuplicateWindow(after: start, through: keys.last, isFull: keys.count >= size)
        }
    }

    private static func customLinkKeys(
        _ connection: any SQLConnection,
        after: CustomLinkKey,
        size: Int
    ) throws(StorageError) -> [CustomLinkKey] {
        try connection.query(
            customLinkKeysSQL,
            [.integer(after.createdAt), .id(after.externalPurchaseId), .integer(Int64(size))]
        ).map { row in
            CustomLinkKey(createdAt: row[0].integer ?? 0, externalPurchaseId: row[1].id() ?? "")
        }
    }

    /// The keys of the custom-link tokens without a report after a place (creation date, identifier), in order,
    /// limited: a range of `tokens_custom_link_order`, at most the limit's entries read.
    static let customLinkKeysSQL = """
        SELECT w.token_created_at, w.external_purchase_id FROM tokens w
        WHERE w.report_queued_at IS NULL AND \(ReportingPolicy.SQL.isReportedAtExpiry("w"))
            AND (w.token_created_at, w.external_purchase_id) > (?, ?)
        ORDER BY w.token_created_at, w.external_purchase_id LIMIT ?
        """

    /// What may be due: the first condition of `needingReportsCondition`, each part through its own index.
    static let needingReportsCandidates = """
                SELECT l.external_purchase_id FROM line_items l
                WHERE l.report_request_identifier IS NULL AND l.held_since IS NULL AND l.correction IS NULL
                UNION ALL
                SELECT w.external_purchase_id FROM tokens w
                WHERE w.report_queued_at IS NULL AND w.report_due_at IS NULL
                    AND \(ReportingPolicy.SQL.waitsQuietTime("w")) AND w.token_created_at <= ?
                UNION ALL
                SELECT w.external_purchase_id FROM tokens w
                WHERE w.report_queued_at IS NULL AND w.report_due_at IS NOT NULL
                UNION ALL
                SELECT w.external_purchase_id FROM tokens w
                WHERE w.report_queued_at IS NULL AND w.report_due_at IS NULL
                    AND \(ReportingPolicy.SQL.isReportedAtExpiry("w")) AND \(ReportingPolicy.SQL.hasExpired("w"))
                UNION ALL
                SELECT w.external_purchase_id FROM tokens w
                WHERE w.report_queued_at IS NULL AND \(ReportingPolicy.SQL.isReportedAtExpiry("w"))
                    AND (w.token_created_at, w.external_purchase_id) > (?, ?)
                    AND (w.token_created_at, w.external_purchase_id) <= (?, ?)
        """

    /// The planner's condition on `tokens t`, ordered and limited. Parameters: the quiet time's end, now, the
    /// duplicate window (after: creation date and identifier; through: the same), the quiet time's end, the end
    /// of holds, payments open since, payments pending since, now, payments open since, the limit.
    ///
    /// The first condition reads only what may be due, each through its own index, so a pass costs what is
    /// due rather than what is stored: tokens with line items no report carries (`line_items_unreported`),
    /// tokens without an expiry and a report that waited the quiet time (`tokens_awaiting_quiet`, a range),
    /// tokens Apple announced (`tokens_awaiting_announced`), custom-link tokens (any with an expiry, see
    /// `ReportingPolicy`) without a report that expired (`tokens_awaiting_expiry`, a range up to now), and a
    /// window of the rest of the custom-link tokens (`tokens_custom_link_order`, a range of the key between two
    /// places).
    ///
    /// An unexpired custom-link token is due only as a duplicate, and only the window's are checked: a pass
    /// reads at most what is due plus the window, never every custom-link token (one or two per install, each
    /// unreported until it expires, up to a year). The planner moves the window on each pass and starts again at
    /// the start after the last, so a duplicate is found within as many passes as there are windows of
    /// unreported custom-link tokens (at 500 a window and a pass a minute, a million of them take 2,000 passes,
    /// about a day and a half). Apple is not waiting on a duplicate: it reminds of an active custom-link token
    /// without a report only monthly (`ACTIVE_TOKEN_REMINDER`, Apple: "subtype"), and the token is reported on its
    /// expiry if not before. Every other token the rest of the condition admits is in one of the ranges, so apart from
    /// that delay the result is the same as the rest alone.
    static let needingReportsCondition = """
        WHERE t.external_purchase_id IN (\(needingReportsCandidates))
          AND NOT EXISTS (SELECT 1 FROM reports r WHERE r.external_purchase_id = t.external_purchase_id
                AND r.state IN ('pending', 'rejected'))
          AND (EXISTS (SELECT 1 FROM line_items l WHERE l.external_purchase_id = t.external_purchase_id
                AND l.report_request_identifier IS NULL AND l.held_since IS NULL
                AND l.correction IS NULL)
            OR (NOT EXISTS (SELECT 1 FROM reports r WHERE r.external_purchase_id = t.external_purchase_id)
                AND NOT EXISTS (SELECT 1 FROM line_items l WHERE l.external_purchase_id = t.external_purchase_id
                    AND \(Self.standsForSomething("l")))
                AND NOT EXISTS (SELECT 1 FROM payment_events e WHERE e.held_token = t.external_purchase_id
                    AND e.held_reason IS NOT NULL)
                AND NOT \(ReportingPolicy.SQL.hasSaleWithoutLineItem("t"))
                AND (t.report_due_at IS NOT NULL
                    OR (\(ReportingPolicy.SQL.waitsQuietTime("t")) AND t.token_created_at <= ?
                        AND (t.token_created_at < ? OR NOT \(paymentHoldsNoLineItem)))
                    OR (\(ReportingPolicy.SQL.isReportedAtExpiry("t")) AND \(ReportingPolicy.SQL.hasExpired("t"))
                        AND NOT \(paymentHoldsExpiredToken))
                    OR \(isDuplicateToken))))
        ORDER BY t.token_created_at LIMIT ?
        """

    /// SQL true while a payment holds back the `NO_LINE_ITEM` report of `t`, a token past its quiet wait: one
    /// started within `ReportingPolicy.lastHoldingPaymentMilliseconds` of the token's creation that is open since
    /// the first placeholder (the provider's session lifetime ago) or pending since the second (a delayed payment
    /// method's hold). Its purchase would be the report. The planner waits for it, and the close says so.
    static let paymentHoldsNoLineItem = """
        EXISTS (SELECT 1 FROM payment_sessions s WHERE s.external_purchase_id = t.external_purchase_id
            AND s.created_at < t.token_created_at + \(ReportingPolicy.lastHoldingPaymentMilliseconds)
            AND ((s.state = 'open' AND s.created_at > ?) OR (s.state = 'pending' AND s.updated_at > ?)))
        """

    /// SQL true while a checkout opened on `t`, a custom-link token, before it expired may still be paid: open
    /// since the placeholder (the provider's session lifetime ago). Its purchase would be the report, so the
    /// `NO_LINE_ITEM` due at the expiry waits for it.
    static let paymentHoldsExpiredToken = """
        EXISTS (SELECT 1 FROM payment_sessions s WHERE s.external_purchase_id = t.external_purchase_id
            AND s.state = 'open' AND s.created_at > ? AND s.created_at <= t.token_expires_at)
        """

    /// SQL true for a line item version in `alias` that counts for its token: anything but a version set aside
    /// and then dropped (corrected without a replacement), which Apple never got. A token whose only item was
    /// set aside and dropped is reported as a token without line items, not left unreported.
    static func standsForSomething(_ alias: String) -> String {
        "(\(alias).correction IS NULL OR \(alias).corrected_at IS NULL)"
    }

    /// Whether the token is an extra custom-link token of its customer (a refreshed copy, or another token of
    /// the same `appAccountToken` active at the same time) that is reported `DUPLICATE_TOKEN` (Apple: "Testing
    /// transactions that use custom link tokens", "Reporting unrecognized tokens and tokens without transactions").
    public func isDuplicateToken(_ externalPurchaseId: ExternalPurchaseID, paying: PaymentsUnderWay = .none)
        throws(StorageError) -> Bool
    {
        try database.readers.read { connection throws(StorageError) in
            !(try connection.query(
                "SELECT 1 FROM tokens t WHERE t.external_purchase_id = ? AND \(Self.isDuplicateToken)",
                [.id(externalPurchaseId)] + paying.parameters + paying.parameters
            ).isEmpty)
        }
    }
}
