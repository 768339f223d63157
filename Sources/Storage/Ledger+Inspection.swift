import Foundation

/// A ledger's schema version read without opening it as a ledger: nothing is created and nothing migrated (the
/// pre-flight check must not upgrade a ledger a running older release serves).
extension Ledger {
    /// The SQLite ledger in `directory`; `.notFound` when there is none.
    public static func existingSchemaVersion(directory: String) throws(StorageError) -> Int64 {
        try LedgerBackup.schemaVersion(inspecting(directory: directory))
    }

    /// What the SQLite ledger in `directory` lacks of its schema version's tables, columns, indexes and
    /// triggers (`SchemaShape`), as "table reports, trigger audit_log_no_delete"; nil when it is whole.
    public static func missingSchema(directory: String) throws(StorageError) -> String? {
        let connection = try inspecting(directory: directory)
        let version = try LedgerBackup.schemaVersion(connection)
        guard version <= Migrations.latestVersion else { return nil }
        let missing = try SchemaShape.missing(in: connection, version: version)
        return missing.isEmpty ? nil : SchemaShape.listed(missing)
    }

    /// What SQLite's quick check finds wrong in the ledger file in `directory` (`LedgerDamage.quickCheck`), nil
    /// when it is whole. Reads the whole file: seconds for a ledger of gigabytes.
    public static func damage(directory: String) throws(StorageError) -> String? {
        try LedgerDamage.quickCheck(inspecting(directory: directory))
    }

    /// The PostgreSQL ledger at `target`.
    public static func existingSchemaVersion(postgres target: PostgresTarget) throws(StorageError) -> Int64 {
        try LedgerBackup.schemaVersion(inspecting(postgres: target))
    }

    /// The ids of the signing keys retired in the ledger in `directory` (or at `target`), read the same way: a
    /// key file naming one stops the server's start.
    public static func retiredSigningKeys(directory: String) throws(StorageError) -> Set<String> {
        try retiredSigningKeys(inspecting(directory: directory))
    }

    public static func retiredSigningKeys(postgres target: PostgresTarget) throws(StorageError) -> Set<String> {
        try retiredSigningKeys(inspecting(postgres: target))
    }

    private static func retiredSigningKeys(_ connection: any SQLConnection) throws(StorageError) -> Set<String> {
        Set(
            try connection.query("SELECT kid FROM signing_keys WHERE retired_at IS NOT NULL").compactMap {
                $0.first?.text
            }
        )
    }

    /// The SQLite ledger in `directory`, opened read-only and never created.
    private static func inspecting(directory: String) throws(StorageError) -> SQLiteConnection {
        let path = (directory as NSString).appendingPathComponent(LedgerBackup.fileName)
        do {
            try LedgerFiles.requireLedgerFile(path)
        } catch  where error.code == .noLedger {
            // Opening a pipe would wait for ever; a folder or a device is no database.
            guard FileManager.default.fileExists(atPath: path) else {
                throw StorageError(.notFound, "no ledger at \(path)")
            }
            throw StorageError(.constraint, "\(path) is not a file")
        }
        let connection = try SQLiteConnection(path: path, readOnly: true)
        // An empty file (or one a first start left before migrating) holds none: the server makes it.
        guard try Migrations.hasLedger(connection, dialect: .sqlite) else {
            throw StorageError(.notFound, "no ledger in \(path)")
        }
        return connection
    }

    private static func inspecting(postgres target: PostgresTarget) throws(StorageError) -> PostgresConnection {
        let connection = try PostgresConnection(target: target)
        guard try Migrations.hasLedger(connection, dialect: .postgres) else {
            throw StorageError(.notFound, "no ledger in the PostgreSQL database")
        }
        return connection
    }
}

extension Ledger {
    /// Visits in the data folder's journal that are not in the tables while no server holds the folder: a server
    /// stopped (or killed) before it folded them in, and its next start applies them. A command reading the tables
    /// (`export`, `close`, `report`) does not see them until then. 0 on PostgreSQL (no journal) or while a server
    /// runs (it folds them in moments later).
    public func visitsAwaitingReplay() -> Int {
        guard database.dialect == .sqlite else { return 0 }
        return Self.visitsAwaitingReplay(directory: (path as NSString).deletingLastPathComponent) {
            () throws(StorageError) in try database.journalApplied()
        }
    }

    /// The same for the SQLite ledger in `directory`, read without opening it as a ledger (the pre-flight check).
    public static func visitsAwaitingReplay(directory: String) -> Int {
        let path = (directory as NSString).appendingPathComponent(LedgerBackup.fileName)
        guard LedgerFiles.isRegularFile(path) else { return 0 }
        return visitsAwaitingReplay(directory: directory) { () throws(StorageError) in
            try SQLDatabase.journalApplied(in: try SQLiteConnection(path: path, readOnly: true))
        }
    }

    private static func visitsAwaitingReplay(directory: String, applied: () throws(StorageError) -> Int64) -> Int {
        guard !isServed(directory: directory), let applied = try? applied() else { return 0 }
        // A file at a time, as a replay reads them: a killed server's backlog can be hundreds of megabytes.
        return LedgerBackup.journalPaths(directory).reduce(0) { count, path in
            count + LedgerBackup.readJournalFile(path).count { $0.sequence > applied }
        }
    }
}
