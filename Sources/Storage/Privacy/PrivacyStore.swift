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

    /// Writes zeros over every free page of the ledger's file (SQLite). The ledger zeroes what it frees
    /// (`secure_delete = ON`, `SQLDatabase`), but a ledger written by a release before 0.35.0 ran with `FAST`,
    /// which left the pages a rewritten row gave up as they were: an event's processing rewrote its row, and a
    /// copy of the file still read the person's address from the free list after an erasure. The free pages are
    /// taken by a scratch table of zeros a chunk at a time (each its own short transaction: the server's writes
    /// wait for one chunk, never for the whole), never past the free list (the file grows by a page at most, where
    /// the last free pages meet a full leaf), then given back, also when a chunk fails. Returns about how many pages were zeroed.
    @discardableResult
    public func zeroFreePages() throws(StorageError) -> Int64 {
        guard database.dialect == .sqlite else { return 0 }
        let zeroed: Int64
        do {
            zeroed = try fillFreePages()
        } catch {
            try? giveBackScratchPages()
            throw error
        }
        try giveBackScratchPages()
        return zeroed
    }

    /// Takes the free pages into the scratch table, which each chunk makes if it is not there (another run, the
    /// server's or a command's, may have given it back meanwhile).
    private func fillFreePages() throws(StorageError) -> Int64 {
        var zeroed: Int64 = 0
        // Bounded: others' writes free pages meanwhile, and a chunk is at most `zeroPagesPerChunk`.
        let start = try freePageCount()
        for _ in 0..<(start / Self.zeroPagesPerChunk + 100) {
            let taken = try database.writer.write { connection throws(StorageError) -> Int64 in
                let free = try connection.query("PRAGMA freelist_count").first?.first?.integer ?? 0
                guard free > 0 else { return 0 }
                // What an overflow page holds: the page but its 4-byte link.
                let overflow = (try connection.query("PRAGMA page_size").first?.first?.integer ?? 4096) - 4
                // A row of `pages` overflow pages, its first bytes on a leaf page (SQLite's smallest local part,
                // `minLocal`, when the rest fills whole overflow pages): two pages are left for the leaf and an
                // interior page it may need, so the file is not made longer. The last free pages go to rows of
                // half a page.
                let pages = min(Self.zeroPagesPerChunk, max(free - 2, 0))
                let minLocal = (overflow - 8) * 32 / 255 - 23
                let bytes = pages > 0 ? minLocal + pages * overflow - 8 : overflow / 2
                try connection.execute("CREATE TABLE IF NOT EXISTS \(Self.scratchTable) (zeros BLOB NOT NULL)")
                try connection.query(
                    "INSERT INTO \(Self.scratchTable) (zeros) VALUES (zeroblob(?))",
                    [.integer(bytes)]
                )
                return max(pages, 1)
            }
            guard taken > 0 else { break }
            zeroed += taken
        }
        return zeroed
    }

    /// Gives the scratch table's pages back and drops it: a few rows a transaction, with `FAST` (the pages hold
    /// zeros already, so only the free list is written; with `ON` each page would be written again). Nothing when
    /// there is none. The server calls it at start too, for a table a run cut short (a killed command) left.
    public func giveBackScratchPages() throws(StorageError) {
        guard database.dialect == .sqlite else { return }
        let name = Self.scratchTable
        while try database.writer.write({ connection throws(StorageError) -> Bool in
            let exists = try connection.query(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                [.text(name)]
            )
            guard !exists.isEmpty else { return false }
            try connection.execute("PRAGMA secure_delete = FAST")
            defer { _ = try? connection.execute("PRAGMA secure_delete = ON") }
            return try connection.change("DELETE FROM \(name) WHERE rowid IN (SELECT rowid FROM \(name) LIMIT 4)", [])
                > 0
        }) {}
        try database.writer.write { connection throws(StorageError) in
            try connection.execute("DROP TABLE IF EXISTS \(name)")
        }
    }

    /// The ledger's free pages (0 on PostgreSQL).
    public func freePageCount() throws(StorageError) -> Int64 {
        guard database.dialect == .sqlite else { return 0 }
        return try database.readers.read { connection throws(StorageError) in
            try connection.query("PRAGMA freelist_count").first?.first?.integer ?? 0
        }
    }

    static let scratchTable = "free_page_zeros"
    /// About a mebibyte of zeros a transaction.
    static let zeroPagesPerChunk: Int64 = 256

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
