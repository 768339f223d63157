import Foundation
import Lifecycle

/// The ledger's database: one group-commit writer connection and a pool of reader connections, on SQLite (one
/// file in WAL mode) or on PostgreSQL (a server several instances share). The stores (`TokenStore`,
/// `ReportStore`, ...) run their SQL through it; the SQL is the same on both engines (see `SQLDialect` for where
/// they differ).
final class SQLDatabase: Sendable {
    let dialect: SQLDialect
    /// What the SQLite file's connections found damaged (never anything on PostgreSQL).
    let damage: LedgerDamage
    let writer: GroupCommitWriter
    let readers: ReaderPool
    /// SQLite's page limit as opened, restored by `limitPages(nil)` (nil on PostgreSQL).
    private let openedMaxPages: Int64?
    /// The commission regimes the money rows are classified under (`MoneyStore.useRegimes`).
    let commissionRegimes = CommissionRegimesHolder()
    /// The size a SQLite ledger's WAL is cut back to once it starts over (32 MiB: eight times what SQLite's
    /// checkpoints every thousand pages leave it at under a steady load).
    static let walSizeLimit = 32 << 20

    /// Opens (creating if needed, unless `upgrade` is `.never`: a command makes no ledger) the SQLite database at
    /// `path` and applies pending migrations.
    convenience init(
        path: String,
        durability: Ledger.Durability,
        upgrade: Ledger.Upgrade = .migrate,
        clock: Lifecycle.Clock
    ) throws(StorageError) {
        let connection: SQLiteConnection
        let maxPages: Int64
        let damage = LedgerDamage()
        do throws(StorageError) {
            connection = try SQLiteConnection(path: path, damage: damage)
            // Before anything writes to the file (turning on WAL writes its header).
            if upgrade == .never, try !Migrations.hasLedger(connection, dialect: .sqlite) {
                throw Ledger.noLedger(at: path)
            }
            let mode = try connection.query("PRAGMA journal_mode = WAL")
            guard mode.first?.first?.text == "wal" else {
                throw StorageError(.sqlite(0), "journal_mode is \(mode), expected wal")
            }
            // `secure_delete = ON` is every writing connection's (`SQLiteConnection`).
            // `journal_size_limit`: once a checkpoint has let the WAL start over, it is cut back to this size. A
            // long read during heavy writes makes it grow past SQLite's thousand pages, and it never shrank (83 MB
            // after half an hour of mixed traffic, for good).
            try connection.execute(
                "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL"); PRAGMA cache_size = -32768; "
                    + "PRAGMA journal_size_limit = \(Self.walSizeLimit)"
            )
            try Migrations.apply(to: connection, dialect: .sqlite, now: clock.nowMilliseconds(), upgrade: upgrade)
            maxPages = try connection.query("PRAGMA max_page_count").first?.first?.integer ?? 1_073_741_823
        } catch  where error.code == .readOnly {
            // SQLite's "attempt to write a readonly database" names neither the file nor what to do.
            throw StorageError(
                error.code,
                "the ledger \(path) cannot be written (a read-only file, folder or mount): linkout opens it for "
                    + "writing even to read it (its WAL, and pending migrations); copy it somewhere writable, or "
                    + "restore it there (linkout restore)",
                sqliteCode: error.sqliteCode
            )
        }
        self.init(
            dialect: .sqlite,
            damage: damage,
            writer: connection,
            readers: ReaderPool { () throws(StorageError) in
                try SQLiteConnection(path: path, readOnly: true, damage: damage)
            },
            maxPages: maxPages
        )
    }

    /// Connects to PostgreSQL and applies pending migrations (under an advisory lock: instances starting together
    /// migrate once). Commits wait for the server's WAL flush (`synchronous_commit` on, its default), so a
    /// committed visit survives the server's crash as SQLite's does.
    convenience init(
        postgres target: PostgresTarget,
        upgrade: Ledger.Upgrade = .migrate,
        clock: Lifecycle.Clock
    ) throws(StorageError) {
        let connection = try PostgresConnection(target: target)
        // Before the migrations make their table: a command creates no ledger.
        if upgrade == .never, try !Migrations.hasLedger(connection, dialect: .postgres) {
            throw Ledger.noLedger(at: target.redactedURL)
        }
        // Waiting for another instance's migrations, or running a long one, is not a stuck request.
        try connection.setStatementTimeout(milliseconds: 0)
        try Migrations.apply(to: connection, dialect: .postgres, now: clock.nowMilliseconds(), upgrade: upgrade)
        try connection.setStatementTimeout(milliseconds: target.statementTimeoutMilliseconds)
        self.init(
            dialect: .postgres,
            damage: LedgerDamage(),
            writer: connection,
            readers: ReaderPool(limit: target.readers) { () throws(StorageError) in
                try PostgresConnection(target: target)
            },
            maxPages: nil
        )
    }

    private init(
        dialect: SQLDialect,
        damage: LedgerDamage,
        writer: sending any SQLConnection,
        readers: ReaderPool,
        maxPages: Int64?
    ) {
        self.dialect = dialect
        self.damage = damage
        self.writer = GroupCommitWriter(connection: writer)
        self.readers = readers
        openedMaxPages = maxPages
    }

    var commitCount: Int { writer.commitCount }

    func close() {
        writer.stop()
        readers.drain()
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
