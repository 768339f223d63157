import Foundation
public import Lifecycle

#if canImport(Glibc)
import Glibc
#endif

/// `linkout backup` and `linkout restore` of the SQLite ledger. A backup is one self-contained SQLite file: a
/// consistent snapshot (`VACUUM INTO`, a read transaction, safe under a running server's writes) with every visit
/// the server had acknowledged when the backup began, including those still in the visit journal. A restore
/// checks the file, puts it in place of an empty data folder, upgrades it if an earlier release made it, and
/// marks the time, so reporting settles with Apple anything the lost days may have sent (see `RestoreDoubt`).
public enum LedgerBackup {
    /// What a backup or restore holds.
    public struct Summary: Sendable, Equatable {
        public var schemaVersion: Int64
        public var tokens: Int64
        /// Visits taken from the journal into the copy (acknowledged, not yet in the tables).
        public var journaledVisits: Int
        public var bytes: Int64
        /// A restore's: the revocations and retirements kept from the ledger it replaced.
        public var revocations = Revocations()
        /// A backup's: what the ledger lacks of its schema (changed by hand), so `restore` refuses the file; it
        /// is written all the same, the one copy of the data there is, and the command says so and fails.
        public var lacks: String?
    }

    static let fileName = "linkout.sqlite"
    /// The setting a restore writes into the ledger it puts in place: when, in UNIX ms (read by `RestoreDoubt`).
    public static let restoredSetting = "restored_at"

    /// Writes the ledger in `directory` to `destination` (a file that must not exist yet).
    public static func backup(directory: String, to destination: String, clock: Lifecycle.Clock = .system)
        throws(StorageError) -> Summary
    {
        let source = (directory as NSString).appendingPathComponent(fileName)
        try LedgerFiles.requireLedgerFile(source)
        guard !LedgerFiles.isTaken(destination) else {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: destination, isDirectory: &isFolder), isFolder.boolValue {
                throw StorageError(
                    .conflict,
                    "\(destination) is a folder: name the backup's file in it (\(destination)/linkout-backup.sqlite)"
                )
            }
            throw StorageError(.conflict, "\(destination) exists; a backup never overwrites a file (or a link)")
        }
        // The copy is opened to take the journal in; at another schema this release would migrate it, and a
        // backup meant for a rollback would come out at the new schema.
        // Read-write connections, though nothing is written through them: a read-only one cannot take over a
        // WAL read mark another process left, and under a flood of landings it can be refused again and again.
        let version = try whileBusy { () throws(StorageError) in
            let connection = try SQLiteConnection(path: source)
            guard try Migrations.hasLedger(connection, dialect: .sqlite) else { throw Ledger.noLedger(at: source) }
            return try schemaVersion(connection)
        }
        guard version == Migrations.latestVersion else {
            throw StorageError(
                version > Migrations.latestVersion ? .newerSchema : .olderSchema,
                "the ledger's schema is version \(version) and this release's \(Migrations.latestVersion): back it up "
                    + "with the release that runs it"
            )
        }
        // The journal is read before the snapshot is taken: a visit acknowledged before this moment is either in
        // these records, or was ingested (and its segment deleted) before the snapshot, which then holds it.
        // A folder that is not there is said as such ("cannot create x.partial" named a file nobody asked for).
        let folder = (destination as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        guard
            folder.isEmpty
                || (FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue)
        else {
            throw StorageError(.dataFolder, "there is no folder \(folder) to write the backup in: create it first")
        }
        let journaled = readJournal(directory)
        let partial = try PartialBackupFile(for: destination)
        do throws(StorageError) {
            // Every step until the copy is published writes to the backup's disk, not the ledger's.
            var summary: Summary
            do throws(StorageError) {
                try whileBusy { () throws(StorageError) in
                    // VACUUM INTO writes only into an empty file: an attempt SQLite found busy starts again from none.
                    try partial.empty()
                    try SQLiteConnection(path: source).query("VACUUM INTO ?", [.text(partial.path)])
                }
                let added = try apply(journaled, to: partial.path, clock: clock)
                summary = try seal(partial.path)
                summary.journaledVisits = added
            } catch {
                if let damaged = Self.damaged(source, failure: error) { throw damaged }
                throw Self.writingBackup(error, partial: partial.path, destination: destination)
            }
            summary.lacks = try lacks(copy: partial.path, version: summary.schemaVersion)
            do throws(StorageError) {
                try partial.publish(as: destination)
            } catch {
                throw Self.writingBackup(error, partial: partial.path, destination: destination)
            }
            return summary
        } catch {
            partial.discard()
            throw error
        }
    }

    /// What the copy lacks of its schema's tables, indexes and triggers (a ledger changed by hand), as `restore`
    /// names it when it refuses the file; nil when whole.
    private static func lacks(copy: String, version: Int64) throws(StorageError) -> String? {
        let missing = try SchemaShape.missing(in: SQLiteConnection(path: copy, readOnly: true), version: version)
        return missing.isEmpty ? nil : SchemaShape.listed(missing)
    }

    /// The ledger at `source` found damaged, when `failure` may have come of that: SQLite's `VACUUM INTO` says
    /// "database or disk is full" when it meets a damaged page, which sent the operator to free space.
    private static func damaged(_ source: String, failure: StorageError) -> StorageError? {
        guard failure.code == .diskFull || failure.sqliteCode.map(LedgerDamage.isDamage) == true,
            let connection = try? SQLiteConnection(path: source, readOnly: true),
            let findings = try? LedgerDamage.quickCheck(connection)
        else { return nil }
        return StorageError(
            .constraint,
            "the ledger \(source) is damaged (SQLite's quick check: \(findings)), so no whole backup can be made of it",
            remedy: "restore the last good backup (linkout restore; README \"Backup and restore\")"
        )
    }

    /// A failure writing the backup, said as one: SQLite's words ("database or disk is full") would read as if the
    /// ledger's own disk were, and a full disk is the backup's to free.
    private static func writingBackup(_ error: StorageError, partial: String, destination: String) -> StorageError {
        let folder = (destination as NSString).deletingLastPathComponent
        return StorageError(
            error.code,
            error.message.contains(partial) ? error.message : "cannot write the backup to \(partial): \(error.message)",
            sqliteCode: error.sqliteCode,
            systemError: error.systemError,
            remedy: error.code == .diskFull
                ? "free space on the disk of \(folder.isEmpty ? "." : folder) (or back up to another) and run it again"
                : error.remedy
        )
    }

    /// Runs `body` again while SQLite answers busy (a fresh connection can meet the running server's writer
    /// between its WAL index updates, where the busy timeout does not apply), at most 60 times over about 30 s.
    static func whileBusy<T>(_ body: () throws(StorageError) -> T) throws(StorageError) -> T {
        var attempt = 0
        while true {
            do {
                return try body()
            } catch  where error.code == .sqlite(5) && attempt < 60 {
                attempt += 1
                usleep(useconds_t(min(attempt, 10) * 50_000))
            }
        }
    }

    /// Every record in the journal's files now: the lock file (older releases journaled there) and each segment.
    /// Files are read, never opened for writing; one deleted meanwhile was ingested and is skipped.
    static func readJournal(_ directory: String) -> [JournalRecord] {
        journalPaths(directory).flatMap(readJournalFile)
    }

    /// The journal's files in `directory`: the lock file (older releases journaled there) and each segment.
    static func journalPaths(_ directory: String) -> [String] {
        [(directory as NSString).appendingPathComponent(VisitJournal.lockFileName)]
            + VisitJournal.segmentPaths(in: directory).map(\.path)
    }

    /// The records of one journal file; none when it is gone (ingested and deleted meanwhile).
    static func readJournalFile(_ path: String) -> [JournalRecord] {
        FileManager.default.contents(atPath: path).map { JournalCoding.decodeAll(Array($0)) } ?? []
    }

    /// Applies the journaled visits the copy does not hold, as a server's replay would. Returns how many.
    private static func apply(_ records: [JournalRecord], to path: String, clock: Lifecycle.Clock)
        throws(StorageError) -> Int
    {
        let database = try SQLDatabase(path: path, durability: .full, clock: clock)
        defer { database.close() }
        return try database.applyMissing(records)
    }

    /// Folds the copy's WAL into it, leaves it one file in rollback-journal mode, and checks it.
    private static func seal(_ path: String) throws(StorageError) -> Summary {
        let connection = try SQLiteConnection(path: path)
        try connection.query("PRAGMA wal_checkpoint(TRUNCATE)")
        try connection.query("PRAGMA journal_mode = DELETE")
        return try check(connection, path: path)
    }

    /// `PRAGMA integrity_check` and what the file holds.
    private static func check(_ connection: SQLiteConnection, path: String) throws(StorageError) -> Summary {
        let integrity = try connection.query("PRAGMA integrity_check").compactMap { $0.first?.text }
        guard integrity == ["ok"] else {
            throw StorageError(
                .constraint,
                "\(path) fails SQLite's integrity check: \(integrity.prefix(3).joined(separator: "; "))"
            )
        }
        // An empty file, or another program's database: whole, and no ledger.
        guard try Migrations.hasLedger(connection, dialect: .sqlite),
            try !connection.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tokens'").isEmpty
        else { throw StorageError(.constraint, "\(path) is not a linkout ledger or backup (it has no ledger tables)") }
        return try summary(connection, path: path)
    }

    /// What a ledger file holds: its schema version and tokens.
    static func summary(_ connection: any SQLConnection, path: String) throws(StorageError) -> Summary {
        let tokens = try connection.query("SELECT count(*) FROM tokens").first?.first?.integer ?? 0
        return Summary(
            schemaVersion: try schemaVersion(connection),
            tokens: tokens,
            journaledVisits: 0,
            bytes: fileSize(path)
        )
    }

    static func schemaVersion(_ connection: any SQLConnection) throws(StorageError) -> Int64 {
        try connection.query("SELECT max(version) FROM schema_migrations").first?.first?.integer ?? 0
    }

    /// Syncs the finished file and renames it into place, so `destination` is whole or absent.
    private static func publish(_ partial: String, as destination: String) throws(StorageError) {
        let file = try JournalFile(path: partial)
        try file.sync()
        guard rename(partial, destination) == 0 else {
            throw StorageError(.dataFolder, "cannot rename \(partial) to \(destination)", systemError: errno)
        }
        try JournalFile.syncDirectory((destination as NSString).deletingLastPathComponent.nonEmptyPath)
    }

    /// Checks a backup file without changing it: SQLite's integrity check, and a schema this release knows.
    public static func verify(_ path: String) throws(StorageError) -> Summary {
        guard FileManager.default.fileExists(atPath: path) else { throw StorageError(.notFound, "no file at \(path)") }
        guard LedgerFiles.isRegularFile(path) else {
            throw StorageError(.constraint, "\(path) is not a file (a folder, a device or a pipe is no backup)")
        }
        let summary: Summary
        let missing: [String]
        do throws(StorageError) {
            let connection = try SQLiteConnection(path: path, readOnly: true)
            summary = try check(connection, path: path)
            missing =
                summary.schemaVersion <= Migrations.latestVersion
                ? try SchemaShape.missing(in: connection, version: summary.schemaVersion) : []
        } catch  where error.code == .sqlite(26) {
            throw StorageError(.constraint, "\(path) is not a SQLite database")
        } catch {
            // SQLite's own words ("database disk image is malformed") name no file; linkout's and an open's do.
            throw StorageError(
                error.code,
                error.message.contains(path) ? error.message : "\(path): \(error.message)",
                sqliteCode: error.sqliteCode,
                systemError: error.systemError
            )
        }
        guard summary.schemaVersion <= Migrations.latestVersion else {
            throw StorageError(
                .newerSchema,
                "the backup's schema is version \(summary.schemaVersion), made by a newer release; this release "
                    + "knows schema versions up to \(Migrations.latestVersion)"
            )
        }
        guard missing.isEmpty else {
            throw StorageError(
                .constraint,
                "\(path) is not a whole ledger at schema \(summary.schemaVersion): it lacks "
                    + SchemaShape.listed(missing) + " (changed by hand, or not made by linkout); restore another backup"
            )
        }
        return summary
    }

    /// Puts the backup at `source` in place as the ledger of `directory`, which must be empty (or `replacing` is
    /// set) and not in use by a server. The backup is copied through SQLite, so what its `-wal` holds comes too (a
    /// stopped server's tables can all be there), upgraded if an earlier release made it (unless `keepSchema`: a
    /// rollback to that release), marked with the restore time for reporting (see `RestoreDoubt`), given the
    /// replaced ledger's revocations (`carryRevocations`), checked and synced beside the ledger; only then does it
    /// take the ledger's place. A replaced ledger and its journal are set aside whole in `replaced-<ms>/`, never
    /// deleted. So a restore cut short leaves either the ledger as it was or the marked copy in place.
    public static func restore(
        from source: String,
        into directory: String,
        replacing: Bool,
        keepSchema: Bool = false,
        clock: Lifecycle.Clock = .system
    ) throws(StorageError) -> Summary {
        _ = try verify(source)
        try LedgerFiles.createFolder(directory)
        let target = (directory as NSString).appendingPathComponent(fileName)
        guard !LedgerFiles.areOneFile(source, target) else {
            throw StorageError(.conflict, "\(source) is the ledger of \(directory) itself")
        }
        // What a restore killed part-way into an empty folder left (its copy, its lock file) counts as nothing:
        // trying again needs no `--force`, and the copy is made afresh.
        let present = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter {
            !isLeftOfCutShortRestore($0, in: directory)
        }
        // A server on the folder holds this lock: a ledger is never replaced under it.
        let lockPath = (directory as NSString).appendingPathComponent(VisitJournal.lockFileName)
        guard present.isEmpty || replacing else {
            // A server using the folder is said first: `--force` would be refused for it too. Read from the
            // kernel's list of locks, not by taking the lock (a server starting just then would be refused).
            if JournalFile.lockHolder(lockPath) != nil { throw JournalFile.inUse(lockPath) }
            throw StorageError(
                .conflict,
                "\(directory) is not empty (\(present.sorted().prefix(3).joined(separator: ", "))); restore into an "
                    + "empty folder, or pass --force to replace the ledger there"
            )
        }
        let lockFile = try JournalFile(path: lockPath)
        try lockFile.lockExclusively()
        defer { lockFile.unlock() }
        // A restore into an empty folder that fails leaves it empty (the lock file it made goes too): the retry
        // needs no `--force`, which would also replace a ledger.
        let leaveEmpty = { if present.isEmpty { unlink(lockPath) } }
        let partial = target + ".partial"
        let now = clock.nowMilliseconds()
        var summary: Summary
        let segments: [String]
        do throws(StorageError) {
            // A data folder's ledger (a copy of a killed server's folder) comes with the visits its journal holds
            // and its tables do not yet: acknowledged landings. Read before the copy is made, as a backup does.
            let journaled =
                (source as NSString).lastPathComponent == fileName
                ? readJournal((source as NSString).deletingLastPathComponent.nonEmptyPath) : []
            try LedgerFiles.createAnew(partial)
            try SQLiteConnection(path: source, readOnly: true).query("VACUUM INTO ?", [.text(partial)])
            if !keepSchema { try upgrade(partial, clock: clock) }
            let added = try applyJournal(journaled, to: partial, clock: clock)
            try markRestored(partial, at: now)
            let revocations = try carryRevocations(from: target, into: partial)
            summary = try seal(partial)
            summary.revocations = revocations
            summary.journaledVisits = added
            segments = try setAside(ledger: target, journal: lockFile, in: directory, at: now)
            // One rename (after a sync) puts the copy in the ledger's place; the replaced file lives on aside.
            try publish(partial, as: target)
        } catch {
            LedgerFiles.remove(partial)
            leaveEmpty()
            throw error
        }
        // The replaced ledger's journal goes once the copy is in place (kept in the aside folder): before, a
        // restore cut short would leave that ledger without visits it acknowledged.
        for segment in segments { unlink(segment) }
        try lockFile.truncate()
        return summary
    }

    /// A file a restore killed part-way into an empty folder leaves: its copy (`linkout.sqlite.partial` and
    /// SQLite's files beside it) or its lock file, still empty.
    private static func isLeftOfCutShortRestore(_ name: String, in directory: String) -> Bool {
        let path = (directory as NSString).appendingPathComponent(name)
        return name.hasPrefix(fileName + ".partial")
            || (name == VisitJournal.lockFileName && fileSize(path) == 0 && LedgerFiles.isRegularFile(path))
    }

    /// Applies a copied data folder's journaled visits to the restored copy; how many it did not hold. Only at
    /// this release's schema (the journal is this release's): a copy kept at an earlier one (`--keep-schema`)
    /// with visits waiting is refused, and backed up by the release that ran it first.
    private static func applyJournal(_ records: [JournalRecord], to path: String, clock: Lifecycle.Clock)
        throws(StorageError) -> Int
    {
        guard !records.isEmpty else { return 0 }
        let copy = try SQLiteConnection(path: path, readOnly: true)
        // A stopped server's folder keeps its last segment, whose visits are in the tables already: only those
        // past the copy's `journal_applied` are missing (every schema has the setting).
        let applied = try SQLDatabase.journalApplied(in: copy)
        let missing = records.filter { $0.sequence > applied }
        guard !missing.isEmpty else { return 0 }
        let version = try schemaVersion(copy)
        guard version == Migrations.latestVersion else {
            throw StorageError(
                .olderSchema,
                "the folder's journal holds \(missing.count) visit(s) not in its ledger (schema \(version)); take a "
                    + "backup of the folder with the release that ran it (linkout backup --data-dir) and restore that"
            )
        }
        return try apply(missing, to: path, clock: clock)
    }

    /// Upgrades the copy to this release's schema (a plain restore: this release will run it).
    private static func upgrade(_ path: String, clock: Lifecycle.Clock) throws(StorageError) {
        try SQLDatabase(path: path, durability: .full, clock: clock).close()
    }

    /// Records when the copy was restored, ends every dashboard sign-in it holds (one signed out after the backup
    /// would otherwise be back), and lets go of the leases the backed-up server held (its process is not this
    /// one). In plain SQL, each part only where the copy's schema has its table: a rollback (`restore
    /// --keep-schema`) leaves an earlier release's schema for that release to run.
    private static func markRestored(_ path: String, at now: Int64) throws(StorageError) {
        let connection = try SQLiteConnection(path: path)
        try connection.begin()
        do throws(StorageError) {
            if try has(connection, "settings", "value") {
                try connection.query(
                    """
                    INSERT INTO settings (name, value) VALUES ('\(restoredSetting)', ?)
                    ON CONFLICT(name) DO UPDATE SET value = excluded.value
                    """,
                    [.text(String(now))]
                )
            }
            if try has(connection, "admin_sessions", "session_key") {
                try connection.query("DELETE FROM admin_sessions")
            }
            for table in SQLDatabase.leasedTables where try has(connection, table, "lease_owner") {
                try connection.query(SQLDatabase.releasing(table))
            }
            try connection.commit()
        } catch {
            try? connection.rollback()
            throw error
        }
    }

    /// Whether the ledger on `connection` has `table` with `column` (a schema an earlier release left may not).
    static func has(_ connection: SQLiteConnection, _ table: String, _ column: String) throws(StorageError) -> Bool {
        try !connection.query("SELECT 1 FROM pragma_table_info(?) WHERE name = ?", [.text(table), .text(column)])
            .isEmpty
    }

    /// Appends `entry` to the audit log of the ledger in `directory` as it is, whatever its schema (a restore
    /// for a rollback leaves an earlier release's): no server holds it yet. False when that schema has no audit
    /// log (before schema 25).
    public static func appendAudit(_ entry: AuditEntry, toLedgerIn directory: String) throws(StorageError) -> Bool {
        let connection = try SQLiteConnection(path: (directory as NSString).appendingPathComponent(fileName))
        guard try has(connection, "audit_log", "action") else { return false }
        try AuditStore.append(entry, in: connection)
        return true
    }

    /// Keeps the ledger being replaced (a second link to it, with its WAL folded in, or beside it when it cannot
    /// be: a damaged ledger, a reader holding it) and a copy of its journal in `replaced-<now>/`: they hold what
    /// the operator asked to replace, which may still be wanted. The ledger and its journal stay in place until
    /// the copy is renamed over the ledger; only its WAL and shared memory go now, since a WAL left beside the
    /// restored file would be replayed onto it. Returns the journal's segments, for the caller to delete then.
    private static func setAside(
        ledger target: String,
        journal lockFile: JournalFile,
        in directory: String,
        at now: Int64
    )
        throws(StorageError) -> [String]
    {
        let segments = VisitJournal.segmentPaths(in: directory).map(\.path)
        let journaled = try lockFile.readAll()
        let hasLedger = FileManager.default.fileExists(atPath: target)
        guard hasLedger || !segments.isEmpty || !journaled.isEmpty else { return [] }
        let aside = (directory as NSString).appendingPathComponent("replaced-\(now)")
        try LedgerFiles.createPrivately(folder: aside, named: aside)
        let kept = { (name: String) in (aside as NSString).appendingPathComponent(name) }
        if hasLedger {
            let folded =
                (try? SQLiteConnection(path: target).query("PRAGMA wal_checkpoint(TRUNCATE)").first?.first?.integer)
                == 0
            try LedgerFiles.link(target, to: kept(fileName))
            if !folded, FileManager.default.fileExists(atPath: target + "-wal") {
                try LedgerFiles.link(target + "-wal", to: kept(fileName + "-wal"))
            }
        }
        // Copied, not linked: the journal's files are appended to and deleted by their server.
        for (path, bytes) in segments.map({ ($0, FileManager.default.contents(atPath: $0)) }) + [
            (VisitJournal.lockFileName, journaled.isEmpty ? nil : Data(journaled))
        ] {
            guard let bytes else { continue }
            let copy = try JournalFile(path: kept((path as NSString).lastPathComponent))
            try copy.append(Array(bytes))
            try copy.sync()
        }
        try JournalFile.syncDirectory(aside)
        for suffix in ["-wal", "-shm"] { unlink(target + suffix) }
        try JournalFile.syncDirectory(directory)
        return segments
    }

    /// When the backup's ledger last recorded anything (its newest visit, payment event or report), UNIX ms:
    /// what happened after that is not in it.
    public static func lastActivity(_ path: String) throws(StorageError) -> Int64? {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        return try connection.query(
            """
            SELECT max(at) FROM (SELECT max(last_seen_at) AS at FROM tokens
                UNION ALL SELECT max(received_at) FROM payment_events
                UNION ALL SELECT max(created_at) FROM reports)
            """
        ).first?.first?.integer
    }
}

extension LedgerBackup {
    static func fileSize(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
    }
}

extension String {
    /// `.` for the empty path `deletingLastPathComponent` gives a bare file name.
    var nonEmptyPath: String { isEmpty ? "." : self }
}
