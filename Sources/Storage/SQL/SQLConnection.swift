/// One database connection as the ledger's SQL uses it: `?` parameters, rows of `SQLValue`, and explicit
/// transactions. SQLite and PostgreSQL each implement it; the SQL itself is shared (see `SQLDialect` for the few
/// places where the two differ). Not thread-safe: each connection is owned by one thread at a time.
protocol SQLConnection: AnyObject {
    /// Runs SQL without parameters (schema, settings); may hold several statements.
    func execute(_ sql: String) throws(StorageError)
    /// Runs one statement with `?` parameters and returns every row it produced.
    @discardableResult
    func query(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> [[SQLValue]]
    /// Runs one INSERT, UPDATE or DELETE with `?` parameters and returns how many rows it changed. Where the
    /// count is all a write needs to know (an insert that may meet a conflict), this takes the place of a
    /// `RETURNING` clause, for which SQLite opens, fills and drops a temporary table each time.
    @discardableResult
    func change(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> Int
    /// Starts a write transaction (SQLite takes the write lock at once, so a batch never fails half-way on it).
    func begin() throws(StorageError)
    /// Starts a read-only transaction whose statements all see one moment of the ledger (`ReaderPool.readSnapshot`).
    func beginSnapshot() throws(StorageError)
    func commit() throws(StorageError)
    func rollback() throws(StorageError)
    /// Whether a transaction is open. A failed statement can end one: SQLite rolls the whole transaction back
    /// itself after some errors, and a lost PostgreSQL session takes its transaction with it.
    var isInTransaction: Bool { get }
}

extension SQLConnection {
    @discardableResult
    func query(_ sql: String) throws(StorageError) -> [[SQLValue]] {
        try query(sql, [])
    }
}
