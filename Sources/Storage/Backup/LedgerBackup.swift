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
    }

    static let fileName = "linkout.sqlite"

    /// Writes the ledger in `directory` to `destination` (a file that must not exist yet).
    public static func backup(directory: String, to destination: String, clock: Lifecycle.Clock = .system)
        throws(StorageError) -> Summary
    {
        let source = (directory as NSString).appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: source) else {
            throw StorageError(.notFound, "no ledger at \(source)")
        }
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw StorageError(.conflict, "\(destination) exists; a backup never overwrites a file")
        }
        // The copy is opened to take the journal in; at another schema this release would migrate it, and a
        // backup meant for a rollback would come out at the new schema.
        // Read-write connections, though nothing is written through them: a read-only one cannot take over a
        // WAL read mark another process left, and under a flood of landings it can be refused again and again.
        let version = try whileBusy { () throws(StorageError) in
            try schemaVersion(try SQLiteConnection(path: source))
        }
        guard version == Migrations.latestVersion else {
            throw StorageError(
                version > Migrations.latestVersion ? .newerSchema : .conflict,
                "the ledger's schema is version \(version) and this release's \(Migrations.latestVersion): back it up "
                    + "with the release that runs it"
            )
        }
        // The journal is read before the snapshot is taken: a visit acknowledged before this moment is either in
        // these records, or was ingested (and its segment deleted) before the snapshot, which then holds it.
        let journaled = readJournal(directory)
        let partial = destination + ".partial"
        unlink(partial)
        do throws(StorageError) {
            try whileBusy { () throws(StorageError) in
                unlink(partial)
                try SQLiteConnection(path: source).query("VACUUM INTO ?", [.text(partial)])
            }
            let added = try apply(journaled, to: partial, clock: clock)
            var summary = try seal(partial)
            summary.journaledVisits = added
            try publish(partial, as: destination)
            return summary
        } catch {
            unlink(partial)
            throw error
        }
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
        let paths =
            [(directory as NSString).appendingPathComponent(VisitJournal.lockFileName)]
            + VisitJournal.segmentPaths(in: directory).map(\.path)
        return paths.flatMap { path in
            FileManager.default.contents(atPath: path).map { JournalCoding.decodeAll(Array($0)) } ?? []
        }
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
        let summary: Summary
        do throws(StorageError) {
            summary = try check(try SQLiteConnection(path: path, readOnly: true), path: path)
        } catch  where error.code == .sqlite(26) {
            throw StorageError(.constraint, "\(path) is not a SQLite database")
        }
        guard summary.schemaVersion <= Migrations.latestVersion else {
            throw StorageError(
                .newerSchema,
                "the backup's schema is version \(summary.schemaVersion), made by a newer release; this release "
                    + "knows schema versions up to \(Migrations.latestVersion)"
            )
        }
        return summary
    }

    /// Puts the backup at `source` in place as the ledger of `directory`, which must be empty (or `replacing` is
    /// set, and its ledger and journal are replaced) and not in use by a server. The backup is copied and synced
    /// beside the ledger first, so a failed copy (a full disk) leaves the ledger there as it was. An older backup
    /// is upgraded; the restore time is recorded for reporting.
    public static func restore(
        from source: String,
        into directory: String,
        replacing: Bool,
        clock: Lifecycle.Clock = .system
    ) throws(StorageError) -> Summary {
        _ = try verify(source)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StorageError(.dataFolder, "cannot create \(directory): \(error)")
        }
        let target = (directory as NSString).appendingPathComponent(fileName)
        guard (source as NSString).resolvingSymlinksInPath != (target as NSString).resolvingSymlinksInPath else {
            throw StorageError(.conflict, "\(source) is the ledger of \(directory) itself")
        }
        let present = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        guard present.isEmpty || replacing else {
            throw StorageError(
                .conflict,
                "\(directory) is not empty (\(present.sorted().prefix(3).joined(separator: ", "))); restore into an "
                    + "empty folder, or pass --force to replace the ledger there"
            )
        }
        // A server on the folder holds this lock: a ledger is never replaced under it.
        let lockFile = try JournalFile(path: (directory as NSString).appendingPathComponent(VisitJournal.lockFileName))
        try lockFile.lockExclusively()
        defer { lockFile.unlock() }
        let partial = target + ".partial"
        unlink(partial)
        do {
            try FileManager.default.copyItem(atPath: source, toPath: partial)
        } catch {
            unlink(partial)
            throw StorageError(.dataFolder, "cannot copy \(source) into \(directory): \(error)")
        }
        try JournalFile(path: partial).sync()
        // Only now is the replaced ledger let go: its WAL and journal belong to it, not to the backup.
        for suffix in ["-wal", "-shm"] { unlink(target + suffix) }
        for segment in VisitJournal.segmentPaths(in: directory) { unlink(segment.path) }
        try lockFile.truncate()
        try publish(partial, as: target)
        let database = try SQLDatabase(path: target, durability: .full, clock: clock)
        defer { database.close() }
        try database.writer.write { [now = clock.nowMilliseconds()] connection throws(StorageError) in
            try connection.query(
                """
                INSERT INTO settings (name, value) VALUES ('restored_at', ?)
                ON CONFLICT(name) DO UPDATE SET value = excluded.value
                """,
                [.text(String(now))]
            )
        }
        try database.releaseLeases()
        return try database.readers.read { connection throws(StorageError) in
            try summary(connection, path: target)
        }
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
    fileprivate var nonEmptyPath: String { isEmpty ? "." : self }
}
