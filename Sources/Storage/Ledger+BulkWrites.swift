/// Writes past the stores, for the tools that fill a ledger in bulk (`LedgerSeeding`, for the benchmarks): a
/// store costs a few lookups per row, and filling millions of rows through it would measure the fill. The rows
/// are the tool's to get right. The server never writes this way.
extension Ledger {
    /// Whether the ledger is on PostgreSQL, whose planner needs statistics after a bulk fill.
    package var isOnPostgres: Bool { database.dialect == .postgres }

    /// Runs `statements` in order in one transaction of the ledger's writer; returns once it is committed.
    package func writeInOneTransaction(_ statements: [(sql: String, parameters: [SQLValue])]) throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
            for statement in statements { try connection.query(statement.sql, statement.parameters) }
        }
    }
}
