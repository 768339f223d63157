public import Domain
import Foundation

/// The monthly close's reads: a month's tokens (by `tokenCreationDate`) and line items (by Apple's
/// `creationDate`, one per line item as Apple sees it: `CloseStore+LineItems.swift`), and of those the ones Apple
/// has not accepted, with where each stands in the outbox. Every read is a range of `tokens_close`,
/// `money_line_items_close` or `line_items_close` (migrations 18 and 21): its cost grows with the month, never
/// with the ledger, and the counts of a month's rows are read from the index alone.
public struct CloseStore: Sendable {
    let database: SQLDatabase

    /// What the close needs to tell a waiting token from a due one: now, the `NO_LINE_ITEM` wait, and the
    /// payments that hold it back as the reporting planner sees them.
    public struct Moment: Sendable {
        public var now: Int64
        /// Tokens created after this are still within `reporting.noLineItemAfterSeconds`.
        public var quietSince: Int64
        /// The payments that may still complete (`ReportStore.paymentHoldsNoLineItem`).
        public var paymentsUnderWay: PaymentsUnderWay
        /// Tokens created before this are reported whatever payment is under way (Apple's notice is near).
        public var holdsEndForTokensCreatedBefore: Int64

        public init(
            now: Int64,
            quietSince: Int64,
            paymentsUnderWay: PaymentsUnderWay = .none,
            holdsEndForTokensCreatedBefore: Int64 = .max
        ) {
            self.now = now
            self.quietSince = quietSince
            self.paymentsUnderWay = paymentsUnderWay
            self.holdsEndForTokensCreatedBefore = holdsEndForTokensCreatedBefore
        }

        /// The values of `tokenState`'s placeholders, in their order.
        var stateParameters: [SQLValue] {
            [
                .integer(now), .integer(quietSince), .integer(holdsEndForTokensCreatedBefore),
                .integer(paymentsUnderWay.openSince), .integer(paymentsUnderWay.pendingSince),
                .integer(paymentsUnderWay.openSince),
            ]
        }
    }

    /// SQL naming the state of a token of `t` without an accepted report, its open report (if any) in `r`.
    /// Parameters: `Moment.stateParameters`.
    static let tokenState = """
        CASE WHEN r.state = 'rejected' THEN 'rejected'
            WHEN r.state = 'pending' AND r.attempts > 0 THEN 'retrying'
            WHEN r.state = 'pending' THEN 'pending'
            WHEN EXISTS (SELECT 1 FROM payment_events e WHERE e.held_token = t.external_purchase_id
                AND e.held_reason IS NOT NULL) THEN 'waiting_for_rate'
            WHEN EXISTS (SELECT 1 FROM line_items c WHERE c.external_purchase_id = t.external_purchase_id
                AND c.correction IS NOT NULL AND c.corrected_at IS NULL) THEN 'needs_correction'
            WHEN EXISTS (SELECT 1 FROM line_items u WHERE u.external_purchase_id = t.external_purchase_id
                AND u.report_request_identifier IS NULL AND u.held_since IS NULL AND u.correction IS NULL)
                THEN 'unreported'
            WHEN \(ReportingPolicy.SQL.hasSaleWithoutLineItem("t")) AND NOT EXISTS (SELECT 1 FROM line_items s
                WHERE s.external_purchase_id = t.external_purchase_id AND \(ReportStore.standsForSomething("s")))
                THEN 'sale_without_line_item'
            WHEN t.report_due_at IS NULL AND \(ReportingPolicy.SQL.isReportedAtExpiry("t"))
                AND \(ReportingPolicy.SQL.hasNotExpired("t")) THEN 'not_due'
            WHEN t.report_due_at IS NULL AND \(ReportingPolicy.SQL.waitsQuietTime("t")) AND t.token_created_at > ?
                THEN 'waiting'
            WHEN t.report_due_at IS NULL AND \(ReportingPolicy.SQL.waitsQuietTime("t")) AND t.token_created_at >= ?
                AND \(ReportStore.paymentHoldsNoLineItem) THEN 'payment_open'
            WHEN t.report_due_at IS NULL AND \(ReportingPolicy.SQL.isReportedAtExpiry("t"))
                AND \(ReportStore.paymentHoldsExpiredToken) THEN 'payment_open'
            ELSE 'unreported' END
        """

    /// The tokens of `environment` created in `[from, until)` without an accepted report, with their open
    /// report (at most one per token: `reports_one_open`).
    static let outstandingTokens = """
        FROM tokens t LEFT JOIN reports r ON r.external_purchase_id = t.external_purchase_id
            AND r.state IN ('pending', 'rejected')
        WHERE t.environment = ? AND t.token_created_at >= ? AND t.token_created_at < ? AND t.accepted_at IS NULL
        """

    static func sandboxTest(_ environment: Environment) -> String {
        "substr(l.external_purchase_id, 1, 7) \(environment == .sandbox ? "=" : "<>") 'SANDBOX'"
    }

    // MARK: tokens

    /// The month's tokens, and those not accepted by state.
    public func tokenCounts(environment: Environment, from: Int64, until: Int64, at moment: Moment)
        throws(StorageError) -> CloseCounts
    {
        try database.readers.readSnapshot { connection throws(StorageError) in
            let range: [SQLValue] = [.text(environment.rawValue), .integer(from), .integer(until)]
            var counts = CloseCounts(
                total: try connection.query(
                    "SELECT count(*) FROM tokens WHERE environment = ? AND token_created_at >= ? AND token_created_at < ?",
                    range
                ).first?.first?.integer ?? 0
            )
            let rows = try connection.query(
                "SELECT \(Self.tokenState) AS state, count(*) \(Self.outstandingTokens) GROUP BY 1",
                moment.stateParameters + range
            )
            for row in rows {
                counts.outstanding[try row[0].closedSet("close.state") as CloseItem.State] = row[1].integer ?? 0
            }
            return counts
        }
    }

    /// The month's tokens not accepted, oldest first, at most `limit`.
    public func outstandingTokens(environment: Environment, from: Int64, until: Int64, at moment: Moment, limit: Int)
        throws(StorageError) -> [CloseItem]
    {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT t.external_purchase_id, t.token_created_at, \(Self.tokenState), t.token_expires_at,
                    r.request_identifier, r.next_attempt_at, r.last_http_status
                \(Self.outstandingTokens)
                ORDER BY t.token_created_at, t.external_purchase_id LIMIT ?
                """,
                moment.stateParameters + [
                    .text(environment.rawValue), .integer(from), .integer(until), .integer(Int64(limit)),
                ]
            ).decoded { row throws(StorageError) in
                var item = CloseItem(
                    kind: .token,
                    externalPurchaseId: row[0].id() ?? "",
                    date: row[1].integer ?? 0,
                    state: try row[2].closedSet("close.state")
                )
                item.tokenExpirationDate = row[3].integer
                item.requestIdentifier = row[4].id()
                item.nextAttemptAt = row[5].integer
                item.lastHTTPStatus = row[6].integer
                return item
            }
        }
    }

    /// Tokens of the environment created in `[from, until)` (a window ending two days before Apple's 10-day
    /// `UNREPORTED` notice; Apple: "External Purchase Server API") without an accepted report and with no expiry to
    /// wait for: the ones Apple is about to ask for. Custom-link tokens are left out: Apple expects them once they
    /// expire.
    public func tokensNearNotice(environment: Environment, from: Int64, until: Int64) throws(StorageError) -> Int64 {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT count(*) FROM tokens t WHERE t.environment = ? AND t.token_created_at >= ?
                  AND t.token_created_at < ? AND t.accepted_at IS NULL AND \(ReportingPolicy.SQL.waitsQuietTime("t"))
                """,
                [.text(environment.rawValue), .integer(from), .integer(until)]
            ).first?.first?.integer ?? 0
        }
    }

    // MARK: the earliest open month

    /// The earliest date (UNIX ms, before `before`) of anything of `environment` Apple has not accepted: a token,
    /// a money row, or a version set aside and not corrected; nil when there is none. Tokens and money rows are
    /// read from `since` on (their acceptance never goes back, so a caller that found nothing open before
    /// `since` need not read that range again); set-aside versions, which a rejection can add to any month, from
    /// the start (a partial index of the few there are).
    public func earliestOpen(environment: Environment, since: Int64, before: Int64) throws(StorageError) -> Int64? {
        try database.readers.read { connection throws(StorageError) in
            let range: [SQLValue] = [.text(environment.rawValue), .integer(since), .integer(before)]
            let token = try connection.query(
                """
                SELECT token_created_at FROM tokens WHERE environment = ? AND token_created_at >= ?
                  AND token_created_at < ? AND accepted_at IS NULL ORDER BY token_created_at LIMIT 1
                """,
                range
            ).first?.first?.integer
            let money = try connection.query(
                """
                SELECT creation_date FROM money_line_items WHERE environment = ? AND creation_date >= ?
                  AND creation_date < ? AND accepted_at IS NULL ORDER BY creation_date LIMIT 1
                """,
                range
            ).first?.first?.integer
            let setAside = try connection.query(
                """
                SELECT min(l.creation_date) FROM line_items l WHERE l.correction IS NOT NULL
                  AND l.corrected_at IS NULL AND l.creation_date < ? AND \(Self.sandboxTest(environment))
                """,
                [.integer(before)]
            ).first?.first?.integer
            return [token, money, setAside].compactMap { $0 }.min()
        }
    }

    // MARK: dating line items

    /// Gives line items written without a `creation_date` Apple's `creationDate` from their body (the time
    /// they were received, for a body without one), at most `limit` per call; returns how many it dated, so a
    /// caller repeats until 0.
    @discardableResult
    public func dateLineItems(limit: Int) throws(StorageError) -> Int {
        let undated = try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT id, body, received_at FROM line_items WHERE creation_date IS NULL ORDER BY id LIMIT ?",
                [.integer(Int64(limit))]
            )
        }
        guard !undated.isEmpty else { return 0 }
        try database.writer.write { connection throws(StorageError) in
            for row in undated {
                let date = Self.creationDate(ofBody: row[1].text ?? "") ?? row[2].integer ?? 0
                try connection.query(
                    "UPDATE line_items SET creation_date = ? WHERE id = ? AND creation_date IS NULL",
                    [.integer(date), .integer(row[0].integer ?? 0)]
                )
            }
        }
        return undated.count
    }

    /// Apple's `creationDate` (UNIX ms) of a line item's JSON.
    static func creationDate(ofBody body: String) -> Int64? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let number = object["creationDate"] as? NSNumber
        else { return nil }
        return number.int64Value
    }
}
