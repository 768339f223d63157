import Domain

/// The schema, as numbered migrations applied in order at start-up, then the post-migration steps.
///
/// The rule for every migration here: once a release carries a migration, its steps are never edited. Ledgers
/// that applied it never run it again and ledgers that did not must end up with the same schema and rows, so a
/// change is a new migration. The exceptions: a migration no release has carried yet (its version is above the
/// schema of the last release, see `Release`) may still change, since no ledger outside development has it; and
/// its comment may be corrected at any time, since a comment changes nothing a ledger runs. A migration never
/// calls code that keeps changing (the stores, `MoneyRows`): work that needs this release's code, such as rows
/// derived from stored ones, is a `PostMigrationStep`.
enum Migrations {
    /// Every migration, in order (one file per span of versions).
    static let all: [Migration] = versions1To12 + versions13To19 + versions20To27 + versions28On

    /// The schema version this release writes: its last migration's.
    static var latestVersion: Int64 { all.last?.version ?? 0 }

    /// The work after the migrations, in order.
    static let postMigrationSteps: [PostMigrationStep] = [.rebuildMoneyRows]

    /// SQLite's two-argument `min` and `max` (the smaller or larger of two values), which the shared SQL uses;
    /// PostgreSQL calls them `LEAST` and `GREATEST` and has `min`/`max` only as aggregates of one argument.
    static let postgresFunctions = """
        CREATE OR REPLACE FUNCTION min(a BIGINT, b BIGINT) RETURNS BIGINT
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT LEAST(a, b)';
        CREATE OR REPLACE FUNCTION max(a BIGINT, b BIGINT) RETURNS BIGINT
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT GREATEST(a, b)';
        """

    /// PostgreSQL's row triggers do not fire on `TRUNCATE` (PostgreSQL: "CREATE TRIGGER"), which emptied the
    /// append-only log whole: a statement trigger refuses it with version 25's function. Made at any start that
    /// finds it missing rather than by a migration, so the schema's version stays and a rollback keeps working
    /// (a release before it runs a ledger with one more trigger as it is). SQLite has no `TRUNCATE`.
    static let postgresAuditLogRefusesTruncate = """
        DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_trigger
                    WHERE tgname = 'audit_log_no_truncate' AND tgrelid = 'audit_log'::regclass) THEN
                CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
                    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
            END IF;
        END $$
        """

    /// A lock number of linkout's own: instances starting together take turns, so each migration runs once.
    static let advisoryLock: Int64 = 0x6C69_6E6B_6F75_74

    /// Applies the migrations not applied yet, each in its own transaction with its version row, then the
    /// post-migration steps the ledger needs. On PostgreSQL under an advisory lock, so two instances starting
    /// together migrate once (the second finds them applied).
    /// `upTo`: the last version to apply (tests build the ledger an earlier release left, then upgrade it).
    static func apply(
        to connection: any SQLConnection,
        dialect: SQLDialect,
        now: Int64,
        upTo last: Int64 = .max,
        upgrade: Ledger.Upgrade = .migrate
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
        if upgrade == .never, let newest = applied.max(), newest < latestVersion {
            throw StorageError(
                .olderSchema,
                "the ledger's schema is version \(newest) and this release's \(latestVersion): `linkout serve` of this "
                    + "release upgrades it when it starts, commands never do, so the release that runs it keeps "
                    + "working (see README \"Upgrades and rollbacks\")"
            )
        }
        var migrated: Set<Int64> = []
        for migration in all where !applied.contains(migration.version) && migration.version <= last {
            try inTransaction(connection) { () throws(StorageError) in
                try migration.run(on: connection, dialect: dialect)
                try connection.query(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    [.integer(migration.version), .integer(now)]
                )
            }
            migrated.insert(migration.version)
        }
        if dialect == .sqlite { finishAfterMigrating(connection) }
        let done = applied.union(migrated)
        // Asked outside a transaction first: a ledger that needs nothing (every start but the first after an
        // upgrade) takes no write lock, which a tool opening a SQLite ledger beside the server would wait for.
        for step in postMigrationSteps where done.contains(step.after) {
            guard try step.isNeeded(connection, migrated) else { continue }
            try inTransaction(connection) { () throws(StorageError) in
                if try step.isNeeded(connection, migrated) { try step.run(connection, dialect, done) }
            }
        }
        if dialect == .postgres, done.contains(25) { try connection.execute(postgresAuditLogRefusesTruncate) }
    }

    /// Runs what `afterMigrating` lists and a ledger still needs, each statement in a transaction of its own.
    /// Looked up first, so a start with nothing to do writes nothing (and takes no write lock). A statement that
    /// fails (another process holds the write lock past the busy timeout) does not stop the start: what it
    /// replaces still serves, and the next start does it.
    private static func finishAfterMigrating(_ connection: any SQLConnection) {
        for (needed, statement) in afterMigrating {
            let found = try? connection.query(needed)
            if found?.isEmpty == false { try? connection.execute(statement) }
        }
    }

    /// Whether the database holds a ledger: migrations were recorded in it (an empty SQLite file, a PostgreSQL
    /// database nothing ever migrated, or one a first start left before its first migration, holds none).
    static func hasLedger(_ connection: any SQLConnection, dialect: SQLDialect) throws(StorageError) -> Bool {
        let table =
            dialect == .postgres
            ? "SELECT 1 WHERE to_regclass('schema_migrations') IS NOT NULL"
            : "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        guard try !connection.query(table).isEmpty else { return false }
        return try !connection.query("SELECT 1 FROM schema_migrations LIMIT 1").isEmpty
    }

    private static func inTransaction(
        _ connection: any SQLConnection,
        _ body: () throws(StorageError) -> Void
    ) throws(StorageError) {
        try connection.begin()
        do throws(StorageError) {
            try body()
            try connection.commit()
        } catch {
            try? connection.rollback()
            throw error
        }
    }
}
