import Domain

/// The schema, as numbered migrations applied in order at start-up. Never edit a released migration; add one.
enum Migrations {
    /// Every migration, in order (one file per span of versions).
    static let all: [(version: Int64, sql: String)] = versions1To12 + versions13To19 + versions20To27

    /// The schema version this release writes: its last migration's.
    static var latestVersion: Int64 { all.last?.version ?? 0 }

    /// Work a migration needs beyond SQL, run in its transaction after its SQL: version 17 fills the money rows
    /// and the daily roll-up from the line items already stored (no regime is in force yet; the server
    /// classifies them again when it starts with regimes, see `MoneyStore.useRegimes`); version 25 adds the
    /// audit log's triggers, which differ between the engines.
    static let backfills: [Int64: @Sendable (any SQLConnection, SQLDialect) throws(StorageError) -> Void] = [
        17: { connection, dialect throws(StorageError) in
            try MoneyRows.rebuild(in: connection, dialect: dialect, regimes: [])
        },
        25: { connection, dialect throws(StorageError) in
            try connection.execute(appendOnlyAuditLog(dialect))
        },
    ]

    /// The database itself refuses to change or remove an audit row, whatever client asks: the triggers are
    /// each engine's own language.
    static func appendOnlyAuditLog(_ dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite:
            """
            CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
                BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
            CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
                BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
            """
        case .postgres:
            """
            CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION 'the audit log is append-only'; END $$;
            CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
                FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
            """
        }
    }

    /// SQLite's two-argument `min` and `max` (the smaller or larger of two values), which the shared SQL uses;
    /// PostgreSQL calls them `LEAST` and `GREATEST` and has `min`/`max` only as aggregates of one argument.
    static let postgresFunctions = """
        CREATE OR REPLACE FUNCTION min(a BIGINT, b BIGINT) RETURNS BIGINT
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT LEAST(a, b)';
        CREATE OR REPLACE FUNCTION max(a BIGINT, b BIGINT) RETURNS BIGINT
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT GREATEST(a, b)';
        """

    /// A lock number of linkout's own: instances starting together take turns, so each migration runs once.
    static let advisoryLock: Int64 = 0x6C69_6E6B_6F75_74

    /// Applies the migrations not applied yet, each in its own transaction with its version row. On PostgreSQL
    /// under an advisory lock, so two instances starting together migrate once (the second finds them applied).
    /// `upTo`: the last version to apply (tests build the ledger an earlier release left, then upgrade it).
    static func apply(
        to connection: any SQLConnection,
        dialect: SQLDialect,
        now: Int64,
        upTo last: Int64 = .max
    ) throws(StorageError) {
        if dialect == .postgres { try connection.query("SELECT pg_advisory_lock(?)", [.integer(advisoryLock)]) }
        defer {
            if dialect == .postgres {
                _ = try? connection.query("SELECT pg_advisory_unlock(?)", [.integer(advisoryLock)])
            }
        }
        try connection.execute(
            dialect.schema(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)"
            )
        )
        if dialect == .postgres { try connection.execute(postgresFunctions) }
        let applied = Set(
            try connection.query("SELECT version FROM schema_migrations").compactMap { $0.first?.integer }
        )
        if let newest = applied.max(), newest > latestVersion {
            throw StorageError(
                .newerSchema,
                "the ledger's schema is version \(newest), migrated by a newer release; this release knows schema "
                    + "versions up to \(latestVersion): run that release again (see README \"Upgrades and rollbacks\")"
            )
        }
        for migration in all where !applied.contains(migration.version) && migration.version <= last {
            try connection.begin()
            do throws(StorageError) {
                try connection.execute(dialect.schema(migration.sql))
                try backfills[migration.version]?(connection, dialect)
                try connection.query(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    [.integer(migration.version), .integer(now)]
                )
                try connection.commit()
            } catch {
                try? connection.rollback()
                throw error
            }
        }
    }
}
