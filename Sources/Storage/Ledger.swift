import Dispatch
import Foundation
import Synchronization

/// The durable record of every token, visit and checkout: SQLite in WAL mode under the data folder.
///
/// Writes go through one group-commit writer; a write's completion runs after the transaction carrying it is
/// committed (with `Durability.full`, after the WAL is fsynced), so a caller that answers only then never
/// acknowledges anything that a crash could lose. Landing visits take a faster durable path: the visit journal
/// (see `VisitJournal`), folded into the tables moments later and replayed at open. Reads use their own
/// connections and never wait for writes.
public final class Ledger: Sendable {
    /// How hard a commit presses the data to disk.
    public enum Durability: String, Sendable {
        /// fsync the WAL at every commit: survives power loss. The default.
        case full
        /// fsync at checkpoints only: survives a killed process, may lose the last commits on power loss.
        case normal
    }

    /// Who opens the ledger.
    public enum Role: Sendable {
        /// The server (or a test standing in for it): owns the visit journal, replays it at open, ingests it.
        /// Only one process may hold a data folder in this role.
        case owner
        /// A command-line tool next to a running server (`export`, `report status`): reads the tables and never
        /// touches the journal, which belongs to the server.
        case reader
    }

    public let path: String
    let writer: GroupCommitWriter
    private let journal: VisitJournal?
    private let ingester: JournalIngester?
    private let shared = JournalShared()
    private let readers = Mutex<[Reader]>([])

    /// Opens (creating if needed) `directory/linkout.sqlite` and applies pending migrations.
    public init(directory: String, durability: Durability = .full, role: Role = .owner) throws(StorageError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StorageError(
                code: -1,
                message: "cannot create data folder \(directory): \(error.localizedDescription)"
            )
        }
        path = (directory as NSString).appendingPathComponent("linkout.sqlite")
        let connection = try SQLiteConnection(path: path)
        let mode = try connection.query("PRAGMA journal_mode = WAL")
        guard mode.first?.first?.text == "wal" else {
            throw StorageError(code: -1, message: "journal_mode is \(mode), expected wal")
        }
        try connection.execute(
            "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL"); PRAGMA cache_size = -32768"
        )
        try Migrations.apply(to: connection, now: Self.nowMilliseconds())
        guard role == .owner else {
            writer = GroupCommitWriter(connection: connection)
            journal = nil
            ingester = nil
            return
        }
        let journalFile = try JournalFile(path: (directory as NSString).appendingPathComponent("visits.journal"))
        // A second server on the same folder would replay and truncate a journal the first one is writing.
        try journalFile.lockExclusively()
        let nextSequence = try Self.replay(journalFile, into: connection)
        let writer = GroupCommitWriter(connection: connection)
        self.writer = writer
        let shared = self.shared
        let ingester = JournalIngester(writer: writer) { batch, outcomes in
            shared.pendingCheckouts.withLock { checkouts in
                for record in batch { checkouts.removeValue(forKey: record.visit.checkoutId) }
            }
            if let last = batch.last?.sequence {
                shared.journal.withLock { $0 }?.markApplied(last)
                shared.applied.store(last, ordering: .relaxed)
            }
            shared.observer.withLock { $0 }?(batch.map(\.visit), outcomes)
            shared.progress.signal()
        }
        self.ingester = ingester
        let journal = VisitJournal(file: journalFile, nextSequence: nextSequence, durable: durability == .full) {
            batch in
            ingester.enqueue(batch)
        }
        self.journal = journal
        shared.journal.withLock { $0 = journal }
        shared.applied.store(nextSequence - 1, ordering: .relaxed)
    }

    /// Applies journaled visits SQLite has not seen (a crash between acknowledging and ingesting them), then
    /// empties the journal. Returns the next sequence number.
    private static func replay(_ file: JournalFile, into connection: SQLiteConnection) throws(StorageError) -> Int64 {
        let applied =
            Int64(
                try connection.query("SELECT value FROM settings WHERE name = 'journal_applied'").first?.first?.text
                    ?? "0"
            )
            ?? 0
        let records = JournalCoding.decodeAll(try file.readAll())
        let missing = records.filter { $0.sequence > applied }
        if !missing.isEmpty {
            try connection.execute("BEGIN IMMEDIATE")
            do throws(StorageError) {
                _ = try JournalIngester.apply(missing, to: connection)
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
        try file.truncate()
        return max(applied, records.map(\.sequence).max() ?? 0) + 1
    }

    /// Records a landing visit durably in the journal; `completion` runs once it is on disk. The visit reaches
    /// the SQLite tables moments later (the checkout is findable at once).
    public func journalVisit(_ visit: Visit, completion: @escaping @Sendable (StorageError?) -> Void) {
        shared.pendingCheckouts.withLock { checkouts in
            checkouts[visit.checkoutId] = CheckoutRecord(
                id: visit.checkoutId,
                bundleId: visit.bundleId,
                externalPurchaseId: visit.token?.externalPurchaseId,
                environment: visit.token?.environment,
                tokenExpiresAt: visit.token?.expiresAt
            )
        }
        guard let journal else {
            completion(
                StorageError(code: -1, message: "this ledger was opened read-only; only the server records visits")
            )
            return
        }
        let shared = self.shared
        journal.append(visit) { error in
            // A visit that never reached the disk was not acknowledged; its checkout must not linger.
            if error != nil { shared.pendingCheckouts.withLock { _ = $0.removeValue(forKey: visit.checkoutId) } }
            completion(error)
        }
    }

    /// Waits (up to `timeout`) until every visit journaled so far is in the SQLite tables; true when it is.
    /// Reads that must see the latest visits (tests, an export right after traffic) call it first.
    @discardableResult
    public func flush(timeout: Duration = .seconds(5)) -> Bool {
        guard let journal else { return true }
        let target = journal.lastAssigned
        let deadline = ContinuousClock.now + timeout
        while shared.applied.load(ordering: .relaxed) < target {
            guard ContinuousClock.now < deadline else { return false }
            _ = shared.progress.wait(timeout: .now() + .milliseconds(50))
        }
        return true
    }

    /// Called with each batch of journaled visits once it is in SQLite.
    public func observeIngestion(_ observer: @escaping @Sendable ([Visit], [RecordOutcome]) -> Void) {
        shared.observer.withLock { $0 = observer }
    }

    /// Commits what is queued and stops the writer. Later writes fail.
    public func close() {
        journal?.stop()
        ingester?.stop()
        writer.stop()
    }

    /// Transactions committed since opening (each may carry many writes).
    public var commitCount: Int { writer.commitCount }

    static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }

    // MARK: writes

    /// Records a visit and returns once it is committed.
    public func recordVisit(_ visit: Visit) throws(StorageError) -> RecordOutcome {
        try writer.write { connection throws(StorageError) in try Self.insert(visit, into: connection) }
    }

    /// Records a token the app forwarded (no visit), with its checkout; returns once committed.
    public func recordForwardedToken(_ token: TokenFields, checkoutId: String, at: Int64) throws(StorageError)
        -> RecordOutcome
    {
        try writer.write { connection throws(StorageError) in
            let isNew = try Self.upsert(token, checkoutId: checkoutId, countVisit: false, at: at, into: connection)
                .isNew
            if isNew {
                try Self.insertCheckout(
                    id: checkoutId,
                    token: token.externalPurchaseId,
                    bundleId: token.bundleId,
                    at: at,
                    into: connection
                )
            }
            return RecordOutcome(checkoutId: checkoutId, visitCount: 0, isNewToken: isNew)
        }
    }

    /// Records the product a person chose on a checkout page; returns the intent's id once committed.
    public func recordCheckoutIntent(
        checkoutId: String,
        productId: String,
        currency: String,
        amount: String,
        at: Int64
    ) throws(StorageError) -> Int64 {
        try writer.write { connection throws(StorageError) in
            let rows = try connection.query(
                """
                INSERT INTO checkout_intents (checkout_id, product_id, currency, amount, created_at)
                VALUES (?, ?, ?, ?, ?) RETURNING id
                """,
                [.text(checkoutId), .text(productId), .text(currency), .text(amount), .integer(at)]
            )
            return rows.first?.first?.integer ?? 0
        }
    }

    /// Proves the ledger takes writes right now (readiness): a one-row write through the same writer as visits.
    public func checkWritable(at: Int64) throws(StorageError) {
        try writer.write { connection throws(StorageError) in
            try connection.query(
                "INSERT INTO settings (name, value) VALUES ('ready_check', ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                [.text(String(at))]
            )
        }
    }

    /// A named secret kept in the ledger (created at random on first use), e.g. the key for checkout ids.
    public func secret(named name: String) throws(StorageError) -> String {
        try writer.write { connection throws(StorageError) in
            var bytes = [UInt8](repeating: 0, count: 32)
            var generator = SystemRandomNumberGenerator()
            for index in bytes.indices { bytes[index] = generator.next() }
            let fresh = bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
            try connection.query(
                "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO NOTHING",
                [.text(name), .text(fresh)]
            )
            let rows = try connection.query("SELECT value FROM settings WHERE name = ?", [.text(name)])
            guard let value = rows.first?.first?.text else {
                throw StorageError(code: -1, message: "secret \(name) missing after insert")
            }
            return value
        }
    }

    static func insert(_ visit: Visit, into connection: SQLiteConnection) throws(StorageError) -> RecordOutcome {
        var visitCount: Int64 = 0
        // Tokenless visits always start a checkout; a token's checkout is created with its first visit.
        var isNew = visit.token == nil
        if let token = visit.token {
            (isNew, visitCount) = try upsert(
                token,
                checkoutId: visit.checkoutId,
                countVisit: true,
                at: visit.at,
                into: connection
            )
        }
        let checkoutId = visit.checkoutId
        if isNew {
            try insertCheckout(
                id: checkoutId,
                token: visit.token?.externalPurchaseId,
                bundleId: visit.bundleId,
                at: visit.at,
                into: connection
            )
        }
        try connection.query(
            """
            INSERT INTO visits (checkout_id, external_purchase_id, visited_at, landing_path, had_token,
                utm_source, utm_medium, utm_campaign, utm_term, utm_content)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(checkoutId), .optional(visit.token?.externalPurchaseId), .integer(visit.at),
                .text(visit.landingPath), .integer(visit.token == nil ? 0 : 1), .optional(visit.utm["utm_source"]),
                .optional(visit.utm["utm_medium"]), .optional(visit.utm["utm_campaign"]),
                .optional(visit.utm["utm_term"]), .optional(visit.utm["utm_content"]),
            ]
        )
        return RecordOutcome(checkoutId: checkoutId, visitCount: visitCount, isNewToken: isNew && visit.token != nil)
    }

    /// One row per externalPurchaseId: the first sighting inserts, later ones bump `last_seen_at` and the count.
    private static func upsert(
        _ token: TokenFields,
        checkoutId: String,
        countVisit: Bool,
        at: Int64,
        into connection: SQLiteConnection
    ) throws(StorageError) -> (isNew: Bool, visitCount: Int64) {
        let increment: Int64 = countVisit ? 1 : 0
        let inserted = try connection.query(
            """
            INSERT INTO tokens (external_purchase_id, checkout_id, raw_token, app_apple_id, bundle_id, token_type,
                token_created_at, token_expires_at, environment, source, app_account_token, first_seen_at,
                last_seen_at, visit_count)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(external_purchase_id) DO NOTHING
            RETURNING visit_count
            """,
            [
                .text(token.externalPurchaseId), .text(checkoutId), .text(token.rawToken), .integer(token.appAppleId),
                .text(token.bundleId), .optional(token.tokenType), .integer(token.createdAt),
                .optional(token.expiresAt), .text(token.environment), .text(token.source),
                .optional(token.appAccountToken), .integer(at), .integer(at), .integer(increment),
            ]
        )
        if let count = inserted.first?.first?.integer { return (true, count) }
        let updated = try connection.query(
            """
            UPDATE tokens SET last_seen_at = max(last_seen_at, ?), visit_count = visit_count + ?,
                app_account_token = COALESCE(app_account_token, ?)
            WHERE external_purchase_id = ? RETURNING visit_count
            """,
            [.integer(at), .integer(increment), .optional(token.appAccountToken), .text(token.externalPurchaseId)]
        )
        guard let count = updated.first?.first?.integer else {
            throw StorageError(code: -1, message: "token upsert found no row")
        }
        return (false, count)
    }

    private static func insertCheckout(
        id: String,
        token: String?,
        bundleId: String,
        at: Int64,
        into connection: SQLiteConnection
    ) throws(StorageError) {
        try connection.query(
            "INSERT INTO checkouts (id, external_purchase_id, bundle_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO NOTHING",
            [.text(id), .optional(token), .text(bundleId), .integer(at)]
        )
    }

    // MARK: reads

    /// Runs `body` on a reader connection borrowed from the pool (opened on demand).
    func read<T: Sendable>(_ body: (SQLiteConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        let reader: Reader
        if let borrowed = readers.withLock({ $0.popLast() }) {
            reader = borrowed
        } else {
            reader = Reader(connection: try SQLiteConnection(path: path, readOnly: true))
        }
        defer { readers.withLock { $0.append(reader) } }
        return try reader.connection.withLock { connection throws(StorageError) in try body(connection) }
    }

    /// A reader connection; the pool hands each to one caller at a time, the Mutex makes that provable.
    private final class Reader: Sendable {
        let connection: Mutex<SQLiteConnection>
        init(connection: sending SQLiteConnection) { self.connection = Mutex(connection) }
    }

    public func checkout(id: String) throws(StorageError) -> CheckoutRecord? {
        if let pending = shared.pendingCheckouts.withLock({ $0[id] }) { return pending }
        return try read { connection throws(StorageError) in
            let rows = try connection.query(
                """
                SELECT c.id, c.bundle_id, c.external_purchase_id, t.environment, t.token_expires_at
                FROM checkouts c LEFT JOIN tokens t ON t.external_purchase_id = c.external_purchase_id
                WHERE c.id = ?
                """,
                [.text(id)]
            )
            guard let row = rows.first, let id = row[0].text, let bundleId = row[1].text else { return nil }
            return CheckoutRecord(
                id: id,
                bundleId: bundleId,
                externalPurchaseId: row[2].text,
                environment: row[3].text,
                tokenExpiresAt: row[4].integer
            )
        }
    }

    /// Tokens in first-seen order; `search` matches the start of an externalPurchaseId, `environment` filters.
    public func tokens(
        limit: Int = Int.max,
        offset: Int = 0,
        search: String? = nil,
        environment: String? = nil
    ) throws(StorageError) -> [TokenRow] {
        try read { connection throws(StorageError) in
            var conditions: [String] = []
            var parameters: [SQLiteValue] = []
            if let search, !search.isEmpty {
                conditions.append("t.external_purchase_id >= ? AND t.external_purchase_id < ?")
                parameters += [.text(search), .text(search + "\u{10FFFF}")]
            }
            if let environment {
                conditions.append("t.environment = ?")
                parameters.append(.text(environment))
            }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            parameters += [.integer(Int64(min(limit, Int(Int64.max)))), .integer(Int64(offset))]
            let rows = try connection.query(
                """
                SELECT t.external_purchase_id, t.environment, t.source, t.bundle_id, t.app_apple_id, t.token_type,
                    t.token_created_at, t.token_expires_at, t.first_seen_at, t.last_seen_at, t.visit_count,
                    t.checkout_id
                FROM tokens t \(filter) ORDER BY t.first_seen_at, t.external_purchase_id LIMIT ? OFFSET ?
                """,
                parameters
            )
            return rows.map { row in
                TokenRow(
                    externalPurchaseId: row[0].text ?? "",
                    environment: row[1].text ?? "",
                    source: row[2].text ?? "",
                    bundleId: row[3].text ?? "",
                    appAppleId: row[4].integer ?? 0,
                    tokenType: row[5].text,
                    tokenCreationDate: row[6].integer ?? 0,
                    tokenExpirationDate: row[7].integer,
                    firstSeenAt: row[8].integer ?? 0,
                    lastSeenAt: row[9].integer ?? 0,
                    visitCount: row[10].integer ?? 0,
                    checkoutId: row[11].text
                )
            }
        }
    }

    /// One recorded landing visit (no IP address is ever stored).
    public struct VisitRow: Sendable, Equatable, Codable {
        public var visitedAt: Int64
        public var landingPath: String
        public var checkoutId: String
        public var utm: [String: String]
    }

    /// A product chosen on a checkout page.
    public struct CheckoutIntentRow: Sendable, Equatable, Codable {
        public var checkoutId: String
        public var productId: String
        public var currency: String
        public var amount: String
        public var createdAt: Int64
    }

    public func visits(for externalPurchaseId: String, limit: Int = 1000) throws(StorageError) -> [VisitRow] {
        try read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT visited_at, landing_path, checkout_id, utm_source, utm_medium, utm_campaign, utm_term, utm_content
                FROM visits WHERE external_purchase_id = ? ORDER BY id LIMIT ?
                """,
                [.text(externalPurchaseId), .integer(Int64(limit))]
            ).map { row in
                var utm: [String: String] = [:]
                for (index, name) in ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"]
                    .enumerated()
                {
                    if let value = row[3 + index].text { utm[name] = value }
                }
                return VisitRow(
                    visitedAt: row[0].integer ?? 0,
                    landingPath: row[1].text ?? "",
                    checkoutId: row[2].text ?? "",
                    utm: utm
                )
            }
        }
    }

    public func checkoutIntents(checkoutId: String) throws(StorageError) -> [CheckoutIntentRow] {
        try read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT checkout_id, product_id, currency, amount, created_at FROM checkout_intents
                WHERE checkout_id = ? ORDER BY id
                """,
                [.text(checkoutId)]
            ).map { row in
                CheckoutIntentRow(
                    checkoutId: row[0].text ?? "",
                    productId: row[1].text ?? "",
                    currency: row[2].text ?? "",
                    amount: row[3].text ?? "",
                    createdAt: row[4].integer ?? 0
                )
            }
        }
    }

    /// Refuses (true) or allows (false) writes, as a read-only disk would: SQLite's `query_only` on the writer.
    /// For maintenance windows and for testing that readiness notices.
    public func suspendWrites(_ suspended: Bool) throws(StorageError) {
        try writer.withConnection { connection throws(StorageError) in
            try connection.execute("PRAGMA query_only = \(suspended ? "ON" : "OFF")")
        }
    }

    /// Counts rows of a table (tests and status output).
    public func count(_ table: CountableTable) throws(StorageError) -> Int64 {
        try read { connection throws(StorageError) in
            try connection.query("SELECT count(*) FROM \(table.rawValue)").first?.first?.integer ?? 0
        }
    }

    public enum CountableTable: String, Sendable {
        case tokens, visits, checkouts
        case checkoutIntents = "checkout_intents"
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}

/// What the journal, the ingester and readers share.
private final class JournalShared: Sendable {
    /// Checkouts of visits that are journaled but not yet in SQLite, so the page behind a fresh 303 is found.
    let pendingCheckouts = Mutex<[String: CheckoutRecord]>([:])
    /// Told about each ingested batch (metrics of new tokens).
    let observer = Mutex<(@Sendable ([Visit], [RecordOutcome]) -> Void)?>(nil)
    /// The journal, created after the ingester whose callback needs it.
    let journal = Mutex<VisitJournal?>(nil)
    /// The highest journal sequence in SQLite, and a signal after each ingested batch (for `flush`).
    let applied = Atomic<Int64>(0)
    let progress = DispatchSemaphore(value: 0)
}
