import Foundation
import Lifecycle

/// The ledger on SQLite: one file in WAL mode, one group-commit writer thread, a pool of reader connections.
final class SQLiteEngine: LedgerEngine {
    let path: String
    let writer: GroupCommitWriter
    let readers: ReaderPool
    /// SQLite's page limit as opened, restored by `limitPages(nil)`.
    private let openedMaxPages: Int64

    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    init(path: String, durability: Ledger.Durability, clock: Lifecycle.Clock) throws(StorageError) {
        self.path = path
        let connection = try SQLiteConnection(path: path)
        let mode = try connection.query("PRAGMA journal_mode = WAL")
        guard mode.first?.first?.text == "wal" else {
            throw StorageError(.sqlite(0), "journal_mode is \(mode), expected wal")
        }
        try connection.execute(
            "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL"); PRAGMA cache_size = -32768"
        )
        try Migrations.apply(to: connection, now: clock.nowMilliseconds())
        openedMaxPages = try connection.query("PRAGMA max_page_count").first?.first?.integer ?? 1_073_741_823
        writer = GroupCommitWriter(connection: connection)
        readers = ReaderPool(path: path)
    }

    var commitCount: Int { writer.commitCount }

    func close() { writer.stop() }

    func read<T: Sendable>(_ body: (SQLiteConnection) throws(StorageError) -> T) throws(StorageError) -> T {
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

    /// `query_only` on the writer: SQLite then refuses writes as on a read-only disk.
    func suspendWrites(_ suspended: Bool) throws(StorageError) {
        try writer.withConnection { connection throws(StorageError) in
            try connection.execute("PRAGMA query_only = \(suspended ? "ON" : "OFF")")
        }
    }

    /// Caps the database at `pages` pages (nil: SQLite's default), so writes that need more fail with
    /// `SQLITE_FULL` as on a full disk. For tests of what a full database does.
    func limitPages(_ pages: Int?) throws(StorageError) {
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
