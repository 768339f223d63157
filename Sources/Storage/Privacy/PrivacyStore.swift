import Domain
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where a person's data sits in the ledger (the bodies of providers' events and of entitlement events), found
/// and rewritten without it: `linkout erase` and the retention pass. Everything Apple's reporting and the
/// developer's accounts need is in the tables' own columns (ids, amounts, dates, country), which nothing here
/// touches.
public struct PrivacyStore: Sendable {
    let database: SQLDatabase

    /// Bodies that hold `text` (an e-mail address, a customer id, an account token) as a whole JSON string,
    /// case-insensitively: `"bob@example.com"`, never inside `"jimbob@example.com"`.
    public func bodies(mentioning text: String, limit: Int = 10_000) throws(StorageError) -> [StoredBody] {
        try database.readers.read { connection throws(StorageError) in
            // Lowered on both sides by the engine's own `lower` (SQLite's folds ASCII letters only): a text with
            // other capitals (`Élodie@…`) is found as written, never missed for being lowered two ways.
            let pattern = "%\"" + Self.escapingLike(text) + "\"%"
            let events = try connection.query(
                """
                SELECT provider, event_id, body FROM payment_events WHERE lower(body) LIKE lower(?) ESCAPE '\\' LIMIT ?
                """,
                [.text(pattern), .integer(Int64(limit))]
            ).map {
                StoredBody(
                    kind: .paymentEvent(provider: $0[0].id() ?? "", eventId: $0[1].text ?? ""),
                    body: $0[2].text ?? ""
                )
            }
            let webhooks = try connection.query(
                "SELECT event_id, body FROM webhook_deliveries WHERE lower(body) LIKE lower(?) ESCAPE '\\' LIMIT ?",
                [.text(pattern), .integer(Int64(limit))]
            ).map { StoredBody(kind: .webhook(eventId: $0[0].text ?? ""), body: $0[1].text ?? "") }
            return events + webhooks
        }
    }

    /// Bodies received before `cutoff` (UNIX ms) that still hold what they arrived with: the retention pass's
    /// work, oldest first, `limit` at a time. Provider events not acted on yet are left for later.
    public func bodies(receivedBefore cutoff: Int64, limit: Int) throws(StorageError) -> [StoredBody] {
        try database.readers.read { connection throws(StorageError) in
            let events = try connection.query(
                """
                SELECT provider, event_id, body FROM payment_events
                WHERE personal_data_erased_at IS NULL AND received_at < ? AND processed_at IS NOT NULL
                    AND held_reason IS NULL
                ORDER BY received_at LIMIT ?
                """,
                [.integer(cutoff), .integer(Int64(limit))]
            ).map {
                StoredBody(
                    kind: .paymentEvent(provider: $0[0].id() ?? "", eventId: $0[1].text ?? ""),
                    body: $0[2].text ?? ""
                )
            }
            let webhooks = try connection.query(
                """
                SELECT event_id, body FROM webhook_deliveries
                WHERE personal_data_erased_at IS NULL AND created_at < ? AND state <> 'pending'
                ORDER BY created_at LIMIT ?
                """,
                [.integer(cutoff), .integer(Int64(limit))]
            ).map { StoredBody(kind: .webhook(eventId: $0[0].text ?? ""), body: $0[1].text ?? "") }
            return events + webhooks
        }
    }

    /// Writes the bodies back as given (without the person's data), marked as done, in one transaction. With
    /// `onlyOnce`, a body already done (by another instance's retention pass) is left alone. Returns how many
    /// were written.
    @discardableResult
    public func replace(_ bodies: [StoredBody], at now: Int64, onlyOnce: Bool = false) throws(StorageError) -> Int {
        try database.writer.write { connection throws(StorageError) in
            let once = onlyOnce ? " AND personal_data_erased_at IS NULL" : ""
            var written = 0
            for stored in bodies {
                switch stored.kind {
                case .paymentEvent(let provider, let eventId):
                    written += try connection.query(
                        """
                        UPDATE payment_events SET body = ?, personal_data_erased_at = ?
                        WHERE provider = ? AND event_id = ?\(once) RETURNING 1
                        """,
                        [.text(stored.body), .integer(now), .id(provider), .text(eventId)]
                    ).count
                case .webhook(let eventId):
                    written += try connection.query(
                        """
                        UPDATE webhook_deliveries SET body = ?, personal_data_erased_at = ?
                        WHERE event_id = ?\(once) RETURNING 1
                        """,
                        [.text(stored.body), .integer(now), .text(eventId)]
                    ).count
                }
            }
            return written
        }
    }

    /// Copies the ledger's WAL into its file and empties it (SQLite), so what a rewrite replaced is no longer in
    /// the WAL's frames: `linkout erase` after it rewrote. True when the WAL is empty; false when a reader held
    /// it after a few tries (the frames are overwritten as the WAL is reused). PostgreSQL's own WAL and backups
    /// are its operator's (README "Privacy").
    public func foldWAL() -> Bool {
        guard database.dialect == .sqlite else { return true }
        for attempt in 0..<3 {
            var busy = true
            try? database.writer.withConnection { connection throws(StorageError) in
                // A TRUNCATE checkpoint holds the write lock while it waits for readers: the server's writes wait
                // behind it, so it waits 100 ms at most, not the connection's 5 s.
                try connection.execute("PRAGMA busy_timeout = 100")
                defer { _ = try? connection.execute("PRAGMA busy_timeout = 5000") }
                busy = try connection.query("PRAGMA wal_checkpoint(TRUNCATE)").first?.first?.integer != 0
            }
            if !busy { return true }
            usleep(useconds_t(200_000 * (attempt + 1)))
        }
        return false
    }

    /// What an erased value is replaced with, in stored bodies and on credentials.
    public static let erased = "[erased]"

    /// Takes an account token off the customer credentials bound to it (they keep their purchases); returns how
    /// many. The credential is marked erased rather than left without an account: one without an account would
    /// be bound to the next account whose purchase it redeems, and so take another person's purchases.
    public func unbindCredentials(appAccountToken: String) throws(StorageError) -> Int {
        try database.writer.write { connection throws(StorageError) in
            try connection.query(
                "UPDATE customer_credentials SET app_account_token = ? WHERE app_account_token = ? RETURNING id",
                [.text(Self.erased), .text(appAccountToken)]
            ).count
        }
    }

    /// Records that an account's data was erased, by a keyed hash of its account token (`accountKey`): the
    /// entitlement events made for its purchases later name it as erased, not by the token again.
    public func markErased(accountKey: String, at now: Int64) throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
            try connection.query(
                "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO NOTHING",
                [.text(Self.erasedAccountSetting(accountKey)), .text(String(now))]
            )
        }
    }

    /// Whether a token or a customer credential of the ledger names the account (an erasure asked for one that
    /// none does is likely mistyped).
    public func isKnown(appAccountToken: String) throws(StorageError) -> Bool {
        try database.readers.read { connection throws(StorageError) in
            !(try connection.query(
                """
                SELECT 1 FROM tokens WHERE app_account_token = ?
                UNION ALL SELECT 1 FROM customer_credentials WHERE app_account_token = ? LIMIT 1
                """,
                [.text(appAccountToken), .text(appAccountToken)]
            )
            .isEmpty)
        }
    }

    /// Whether `markErased` recorded the account.
    public func isErased(accountKey: String) throws(StorageError) -> Bool {
        try database.readers.read { connection throws(StorageError) in
            !(try connection.query(
                "SELECT 1 FROM settings WHERE name = ?",
                [.text(Self.erasedAccountSetting(accountKey))]
            )
            .isEmpty)
        }
    }

    static func erasedAccountSetting(_ accountKey: String) -> String { "erased_account." + accountKey }

    /// The provider's ids an erasure by e-mail address followed (the customer, their payments and charges), kept
    /// under a keyed hash of the address (`subjectKey`): a later event that carries only those ids (a dispute, a
    /// charge, a Paddle transaction) holds nothing of the address, and an erasure run again finds it by them. The
    /// ids are kept in the bodies anyway; this keeps which of them were the person's.
    public func linkedIds(ofErased subjectKey: String) throws(StorageError) -> [String] {
        try database.readers.read { connection throws(StorageError) in
            Self.ids(
                try connection.query(
                    "SELECT value FROM settings WHERE name = ?",
                    [.text(Self.erasedLinksSetting(subjectKey))]
                ).first?.first?.text
            )
        }
    }

    /// Adds `ids` to those kept for `subjectKey`; two erasures of one address at once take turns.
    public func rememberLinkedIds(_ ids: [String], ofErased subjectKey: String) throws(StorageError) {
        guard !ids.isEmpty else { return }
        try database.writer.write { [dialect = database.dialect] connection throws(StorageError) in
            let name = Self.erasedLinksSetting(subjectKey)
            if let serialize = dialect.serializeOnKey { try connection.query(serialize, [.text(name)]) }
            let stored = try connection.query("SELECT value FROM settings WHERE name = ?", [.text(name)])
            try connection.query(
                SettingsStore.replaceSQL,
                [.text(name), .text(Self.mergedIds(stored.first?.first?.text, ids))]
            )
        }
    }

    /// The ids of a kept list (space-separated).
    static func ids(_ stored: String?) -> [String] { stored?.split(separator: " ").map(String.init) ?? [] }

    /// A kept list with `ids` added, each once, in the order first kept.
    static func mergedIds(_ stored: String?, _ ids: [String]) -> String {
        var kept = Self.ids(stored)
        for id in ids where !id.isEmpty && !id.contains(" ") && !kept.contains(id) { kept.append(id) }
        return kept.joined(separator: " ")
    }

    static func erasedLinksSetting(_ subjectKey: String) -> String { "erased_links." + subjectKey }

    /// Replaces `value` (an e-mail address, an account token) where a landing's link carried it as a whole
    /// campaign value (`visits.utm_*`, compared case-insensitively), a span of visits per transaction so the
    /// landings' ingestion waits for no more than one span; returns how many visits changed.
    public func eraseCampaignValues(_ value: String) throws(StorageError) -> Int {
        let columns = Visit.utmParameterNames
        // Lowered by the engine on both sides, as `bodies(mentioning:)` does; the stored value without the spaces
        // around it and with a `%40` read as `@` (a link encoded twice), forms a link leaves the address in.
        let stored = { (column: String) in "lower(replace(trim(\(column)), '%40', '@'))" }
        let assignments = columns.map { "\($0) = CASE WHEN \(stored($0)) = lower(?) THEN ? ELSE \($0) END" }
            .joined(separator: ", ")
        let matches = columns.map { "\(stored($0)) = lower(?)" }.joined(separator: " OR ")
        let last = try database.readers.read { connection throws(StorageError) in
            try connection.query("SELECT max(id) FROM visits").first?.first?.integer ?? 0
        }
        var changed = 0
        var start: Int64 = 0
        while start <= last {
            let (from, end) = (start, start + Self.campaignSpan)
            changed += try database.writer.write { connection throws(StorageError) in
                return try connection.query(
                    "UPDATE visits SET \(assignments) WHERE id >= ? AND id < ? AND (\(matches)) RETURNING 1",
                    columns.flatMap { _ in [SQLValue.text(value), .text(Self.erased)] }
                        + [.integer(from), .integer(end)] + columns.map { _ in .text(value) }
                ).count
            }
            start = end
        }
        return changed
    }

    /// Visits per transaction of `eraseCampaignValues`.
    static let campaignSpan: Int64 = 50_000

    static func escapingLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}
