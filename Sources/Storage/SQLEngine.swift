import Foundation
import Lifecycle

/// The ledger on SQL: one group-commit writer connection and a pool of reader connections, on SQLite (one file
/// in WAL mode) or on PostgreSQL (a server several instances share). The queries are the same on both (see
/// `SQLDialect` for where they differ).
final class SQLEngine: LedgerEngine {
    let dialect: SQLDialect
    let writer: GroupCommitWriter
    let readers: ReaderPool
    /// PostgreSQL's landing path: visits pipelined on a connection of their own (nil on SQLite, whose visits
    /// come through the journal).
    let visitWriter: PostgresVisitWriter?
    /// SQLite's page limit as opened, restored by `limitPages(nil)` (nil on PostgreSQL).
    private let openedMaxPages: Int64?

    /// Opens (creating if needed) the SQLite database at `path` and applies pending migrations.
    convenience init(path: String, durability: Ledger.Durability, clock: Lifecycle.Clock) throws(StorageError) {
        let connection = try SQLiteConnection(path: path)
        let mode = try connection.query("PRAGMA journal_mode = WAL")
        guard mode.first?.first?.text == "wal" else {
            throw StorageError(.sqlite(0), "journal_mode is \(mode), expected wal")
        }
        try connection.execute(
            "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL"); PRAGMA cache_size = -32768"
        )
        try Migrations.apply(to: connection, dialect: .sqlite, now: clock.nowMilliseconds())
        let maxPages = try connection.query("PRAGMA max_page_count").first?.first?.integer ?? 1_073_741_823
        self.init(
            dialect: .sqlite,
            writer: connection,
            readers: ReaderPool { () throws(StorageError) in try SQLiteConnection(path: path, readOnly: true) },
            visitWriter: nil,
            maxPages: maxPages
        )
    }

    /// Connects to PostgreSQL and applies pending migrations (under an advisory lock: instances starting together
    /// migrate once). Commits wait for the server's WAL flush (`synchronous_commit` on, its default), so a
    /// committed visit survives the server's crash as SQLite's does.
    convenience init(postgres target: PostgresTarget, clock: Lifecycle.Clock) throws(StorageError) {
        let connection = try PostgresConnection(target: target)
        // Waiting for another instance's migrations, or running a long one, is not a stuck request.
        try connection.execute("SET statement_timeout = 0")
        try Migrations.apply(to: connection, dialect: .postgres, now: clock.nowMilliseconds())
        try connection.execute("SET statement_timeout = \(target.statementTimeoutMilliseconds)")
        let visits = try PostgresConnection(target: target)
        self.init(
            dialect: .postgres,
            writer: connection,
            readers: ReaderPool(limit: target.readers) { () throws(StorageError) in
                try PostgresConnection(target: target)
            },
            visitWriter: PostgresVisitWriter(connection: visits),
            maxPages: nil
        )
    }

    private init(
        dialect: SQLDialect,
        writer: sending any SQLConnection,
        readers: ReaderPool,
        visitWriter: PostgresVisitWriter?,
        maxPages: Int64?
    ) {
        self.dialect = dialect
        self.writer = GroupCommitWriter(connection: writer)
        self.readers = readers
        self.visitWriter = visitWriter
        openedMaxPages = maxPages
    }

    var commitCount: Int { writer.commitCount + (visitWriter?.commitCount ?? 0) }

    func close() {
        visitWriter?.stop()
        writer.stop()
        readers.drain()
    }

    func read<T: Sendable>(_ body: (any SQLConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        try readers.read(body)
    }

    // MARK: the visit journal

    func journalApplied() throws(StorageError) -> Int64 {
        try read { connection throws(StorageError) in
            let value = try connection.query("SELECT value FROM settings WHERE name = 'journal_applied'")
            return Int64(value.first?.first?.text ?? "0") ?? 0
        }
    }

    func applyJournaled(_ batch: [JournalRecord]) throws(StorageError) -> [RecordOutcome] {
        try writer.write { connection throws(StorageError) in
            var outcomes: [RecordOutcome] = []
            outcomes.reserveCapacity(batch.count)
            for record in batch { outcomes.append(try Self.insert(record.visit, into: connection)) }
            if let last = batch.last?.sequence {
                try connection.query(
                    """
                    INSERT INTO settings (name, value) VALUES ('journal_applied', ?)
                    ON CONFLICT(name) DO UPDATE SET value = excluded.value
                    """,
                    [.text(String(last))]
                )
            }
            return outcomes
        }
    }

    // MARK: settings

    func checkWritable(at: Int64) throws(StorageError) {
        try writer.write { connection throws(StorageError) in
            try connection.query(
                "INSERT INTO settings (name, value) VALUES ('ready_check', ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                [.text(String(at))]
            )
        }
    }

    func secret(named name: String) throws(StorageError) -> String {
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
                throw StorageError(.notFound, "secret \(name) missing after insert")
            }
            return value
        }
    }

    /// The writer refuses writes as on a read-only disk (SQLite `query_only`; PostgreSQL read-only transactions).
    func suspendWrites(_ suspended: Bool) throws(StorageError) {
        try writer.withConnection { connection throws(StorageError) in
            try connection.execute(dialect.suspendWrites(suspended))
        }
    }

    /// Caps the database at `pages` pages (nil: SQLite's default), so writes that need more fail with
    /// `SQLITE_FULL` as on a full disk. For tests of what a full database does.
    func limitPages(_ pages: Int?) throws(StorageError) {
        guard let openedMaxPages else { throw StorageError(.readOnly, "page limits are SQLite's") }
        try writer.withConnection { connection throws(StorageError) in
            try connection.execute("PRAGMA max_page_count = \(pages.map(Int64.init) ?? openedMaxPages)")
        }
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
