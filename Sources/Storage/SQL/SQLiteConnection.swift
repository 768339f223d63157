import CSQLite

#if canImport(Glibc)
import Glibc
#endif

/// One SQLite connection with a cache of prepared statements. Not thread-safe: each connection is owned by one
/// thread at a time (the writer thread, or a reader borrowed from the pool).
final class SQLiteConnection: SQLConnection {
    private let handle: OpaquePointer
    private let damage: LedgerDamage?
    private var statements: [String: OpaquePointer] = [:]
    /// The last statements looked up that `recent` did not hold (first in, first out), looked at before
    /// `statements`: the ingester runs the same few thousands of times a second, and hashing a statement's whole
    /// text for every run cost more than binding it. A statement's text is usually the same `String` each time,
    /// which compares equal without reading it.
    private var recent: [(sql: String, statement: OpaquePointer)] = []
    private var nextRecent = 0
    private static let recentCount = 8

    /// The path of a database that lives in memory only, gone when its connection closes.
    static let inMemory = ":memory:"

    /// `damage`: where this connection notes that SQLite found the file damaged (the ledger's database).
    init(path: String, readOnly: Bool = false, damage: LedgerDamage? = nil) throws(StorageError) {
        self.damage = damage
        _ = Self.configured
        var handle: OpaquePointer?
        // NOMUTEX: each connection is used by one thread at a time, so SQLite's own mutex is redundant.
        // A new ledger is its owner's alone (SQLite would create it world-readable); its WAL follows its mode.
        if !readOnly && path != Self.inMemory { try LedgerFiles.createPrivately(path) }
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            // Why the file could not be opened ("Permission denied", "Read-only file system"): SQLite's message
            // says only that it could not.
            let system = ReadOnlyFileSystem.reason(handle.map { sqlite3_system_errno($0) } ?? 0, openingBeside: path)
            sqlite3_close_v2(handle)
            throw StorageError.sqlite(rc, "open \(path): \(message)", systemError: system == 0 ? nil : system)
        }
        self.handle = handle
        // Wait for another process's lock (e.g. `linkout export` while serving) instead of failing at once.
        sqlite3_busy_timeout(handle, 5000)
        // `secure_delete = ON`, on whatever writes: a row's old bytes are zeroed in the page it leaves, and a page
        // it frees (a long body's overflow pages, rewritten when its event is processed) is zeroed too, so a
        // person's data rewritten away (`linkout erase`, the retention pass, a restore's deleted sign-ins) is not
        // left in free space. `FAST` left freed pages as they were: a copy of the file read an erased address
        // from the free list.
        if !readOnly { sqlite3_exec(handle, "PRAGMA secure_delete = ON", nil, nil, nil) }
    }

    /// Library-wide settings, made once before the first connection opens. A statement that may need undoing on
    /// its own (an upsert, an insert touching several indexes) journals the pages it changes; past 64 KiB SQLite
    /// moved that journal to a temporary file, and a batch of landings wrote every page it touched there a second
    /// time (one pwrite per page, half the ingester's system time). In memory it is a copy, of any size: the
    /// writer's statements are small, and migration 28 keeps its large ones from needing a statement journal.
    private static let configured: Void = {
        _ = csqlite_keep_statement_journals_in_memory()
        _ = csqlite_skip_memory_statistics()
    }()

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// The failure `rc` as an error, with the extended code when the handle holds the one for `rc`.
    private func error(_ rc: Int32) -> StorageError {
        let extended = sqlite3_extended_errcode(handle)
        // A file SQLite opens late (the WAL's `-shm` on a read-only disk) fails here, not at the open.
        var system = rc == SQLITE_CANTOPEN || rc == SQLITE_IOERR ? sqlite3_system_errno(handle) : 0
        let message = String(cString: sqlite3_errmsg(handle))
        if LedgerDamage.isDamage(rc) { damage?.note(message) }
        if let file = sqlite3_db_filename(handle, "main") {
            system = ReadOnlyFileSystem.reason(system, openingBeside: String(cString: file))
        }
        return StorageError.sqlite(
            (extended & 0xff) == rc ? extended : rc,
            message,
            systemError: system == 0 ? nil : system
        )
    }

    /// Runs SQL without parameters (schema, pragmas, BEGIN/COMMIT); may hold several statements.
    func execute(_ sql: String) throws(StorageError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        guard rc == SQLITE_OK else {
            let message = errorMessage.map { String(cString: $0) } ?? ""
            sqlite3_free(errorMessage)
            throw StorageError.sqlite(rc, message)
        }
    }

    /// Prepares (once, then cached), binds, steps to the end and returns every row.
    @discardableResult
    func query(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> [[SQLValue]] {
        let statement = try bound(sql, parameters)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        var rows: [[SQLValue]] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw error(rc) }
            var row: [SQLValue] = []
            let columns = sqlite3_column_count(statement)
            row.reserveCapacity(Int(columns))
            for column in 0..<columns {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(statement, column)))
                case SQLITE_NULL: row.append(.null)
                default:
                    if let text = sqlite3_column_text(statement, column) {
                        row.append(.text(String(cString: text)))
                    } else {
                        row.append(.null)
                    }
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// Steps the statement to its end, then reads the count SQLite keeps of the rows it changed.
    @discardableResult
    func change(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> Int {
        let statement = try bound(sql, parameters)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { return Int(sqlite3_changes64(handle)) }
            guard rc == SQLITE_ROW else { throw error(rc) }
        }
    }

    /// The prepared statement for `sql` with `parameters` bound.
    private func bound(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> OpaquePointer {
        let statement = try prepared(sql)
        for (offset, value) in parameters.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .integer(let integer): rc = sqlite3_bind_int64(statement, index, integer)
            case .text(let text): rc = bind(text, at: index, in: statement)
            case .null: rc = sqlite3_bind_null(statement, index)
            }
            guard rc == SQLITE_OK else {
                sqlite3_clear_bindings(statement)
                throw error(rc)
            }
        }
        return statement
    }

    func begin() throws(StorageError) { try query("BEGIN IMMEDIATE") }
    /// A deferred transaction takes its read mark at its first statement and keeps it to the end.
    func beginSnapshot() throws(StorageError) { try query("BEGIN") }
    func commit() throws(StorageError) { try query("COMMIT") }
    /// Undoes the open transaction, if SQLite has not ended it already: after `SQLITE_FULL` or `SQLITE_NOMEM` in
    /// a statement that keeps no statement journal, and after `SQLITE_IOERR` or `SQLITE_INTERRUPT` in any, it
    /// rolls the whole transaction back itself, and a `ROLLBACK` then fails with an error that would hide the one
    /// that mattered.
    func rollback() throws(StorageError) {
        guard isInTransaction else { return }
        try query("ROLLBACK")
    }

    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Binds `text` from its own UTF-8 bytes (SQLite copies them), without the C string a `String` argument
    /// would be copied into first. As through a C string, the text ends at its first NUL byte.
    private func bind(_ text: String, at index: Int32, in statement: OpaquePointer) -> Int32 {
        var text = text
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                return sqlite3_bind_text(statement, index, "", 0, csqlite_transient())
            }
            let length = memchr(base, 0, bytes.count).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { characters in
                sqlite3_bind_text(
                    statement,
                    index,
                    characters,
                    Int32(clamping: length ?? bytes.count),
                    csqlite_transient()
                )
            }
        }
    }

    private func prepared(_ sql: String) throws(StorageError) -> OpaquePointer {
        for entry in recent where entry.sql == sql { return entry.statement }
        let statement: OpaquePointer
        if let cached = statements[sql] {
            statement = cached
        } else {
            statement = try prepare(sql)
        }
        if recent.count < Self.recentCount {
            recent.append((sql, statement))
        } else {
            recent[nextRecent] = (sql, statement)
            nextRecent = (nextRecent + 1) % Self.recentCount
        }
        return statement
    }

    private func prepare(_ sql: String) throws(StorageError) -> OpaquePointer {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc) }
        statements[sql] = statement
        return statement
    }
}
