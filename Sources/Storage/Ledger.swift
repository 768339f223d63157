import Foundation
public import Lifecycle

/// The durable record of every token, visit, checkout and report, under one data folder.
///
/// Writes return (or complete) only once committed, so a caller that answers only then never acknowledges
/// anything that a crash could lose. Landing visits take each engine's fastest durable path (`VisitRecorder`:
/// on SQLite the visit journal, folded into the tables moments later and replayed at open). The ledger opens
/// the database (SQLite or PostgreSQL, see `SQLDatabase`) and the visit recorder, and hands out the stores that
/// read and write the tables, one per concern: `tokens`, `reports`, `payments`, `entitlements`,
/// `notifications`, `settings`, `adminSessions`, `dashboard`.
public final class Ledger: Sendable {
    /// How hard a commit presses the data to disk.
    public enum Durability: String, Sendable {
        /// fsync the WAL at every commit: survives power loss. The default.
        case full
        /// fsync at checkpoints only: survives a killed process, may lose the last commits on power loss.
        case normal
    }

    /// Who opens the ledger.
    public enum Role: Sendable {
        /// The server (or a test standing in for it): owns the visit journal, replays it at open, ingests it.
        /// Only one process may hold a data folder in this role.
        case owner
        /// A command-line tool next to a running server (`export`, `report status`): reads the tables and never
        /// touches the journal, which belongs to the server.
        case reader
    }

    /// Whether opening a ledger at an older schema upgrades it.
    public enum Upgrade: Sendable {
        /// The server, a restore, tests: pending migrations are applied.
        case migrate
        /// A command beside a server (`export`, `audit`, `report`, ...): an older ledger is refused
        /// (`StorageError.Code.olderSchema`), so a newer release's tool never migrates it under an older server,
        /// and so is a folder or database with no ledger (`StorageError.Code.noLedger`): nothing is created.
        case never
    }

    /// The schema version this release migrates ledgers to (its last migration); a ledger at a later version is
    /// refused at open (`StorageError.Code.newerSchema`).
    public static var schemaVersion: Int64 { Migrations.latestVersion }

    /// Free space on a SQLite data folder's disk below which it is as good as full: less than one journal segment,
    /// which a burst of landings fills in minutes, and a full disk answers landings 503 until space is freed.
    public static var nearlyFullBytes: Int { VisitJournal.defaultSegmentBytes }

    /// Free space below which the journal makes no segment ahead (`JournalSpare`: a segment, and the headroom it
    /// leaves beside it): its segments grow by appends, each sync also writing the file's new size. Landings are
    /// recorded as before.
    public static var spareHeadroomBytes: Int { VisitJournal.defaultSegmentBytes + JournalSpare.headroomBytes }

    /// The bytes this user may still write on the disk holding `directory` (nil when the system does not say).
    public static func freeBytes(in directory: String) -> Int? { JournalFile.freeBytes(in: directory) }

    /// The SQLite database file, or the PostgreSQL URL without its password.
    let path: String
    /// This process's name in outbox leases: unique per opening, so a restarted instance never mistakes a lease
    /// its previous life held for its own.
    public let instance = Ledger.newInstanceName()
    /// Whether this process's wall clock stepped back since the outboxes last looked (`bringForwardAfterClockStep`).
    let clockSteps = WallClockSteps()
    let database: SQLDatabase
    /// How landings' visits become durable on this engine, in this role.
    let visitRecorder: any VisitRecorder

    /// Opens `directory/linkout.sqlite` (creating it if needed, unless `upgrade` is `.never`), applies pending
    /// migrations and, as the owner, replays the visit journal.
    public convenience init(
        directory: String,
        durability: Durability = .full,
        role: Role = .owner,
        upgrade: Upgrade = .migrate,
        clock: Lifecycle.Clock = .system
    ) throws(StorageError) {
        try self.init(
            directory: directory,
            durability: durability,
            role: role,
            upgrade: upgrade,
            clock: clock,
            journalSegmentBytes: VisitJournal.defaultSegmentBytes
        )
    }

    /// As the public initializer, with the journal's segment size and the visits its ingester holds in memory
    /// chosen (tests use small ones).
    package init(
        directory: String,
        durability: Durability = .full,
        role: Role = .owner,
        upgrade: Upgrade = .migrate,
        clock: Lifecycle.Clock = .system,
        journalSegmentBytes: Int,
        journalMemoryLimit: Int? = nil
    ) throws(StorageError) {
        path = (directory as NSString).appendingPathComponent(LedgerBackup.fileName)
        if upgrade == .never { try LedgerFiles.requireLedgerFile(path) }
        try LedgerFiles.createFolder(directory)
        guard role == .owner else {
            database = try SQLDatabase(path: path, durability: durability, upgrade: upgrade, clock: clock)
            visitRecorder = ReaderVisitRecorder(database: database)
            return
        }
        let lockFile = try JournalFile(
            path: (directory as NSString).appendingPathComponent(VisitJournal.lockFileName)
        )
        // A second server on the same folder would replay and delete a journal the first one is writing.
        try lockFile.lockExclusively()
        let database: SQLDatabase
        let nextSequence: Int64
        do throws(StorageError) {
            database = try SQLDatabase(path: path, durability: durability, upgrade: upgrade, clock: clock)
            do throws(StorageError) {
                nextSequence = try JournalVisitRecorder.replay(directory: directory, lockFile: lockFile, into: database)
                // The folder lock makes this the only process on the file: leases left by a previous run are void.
                try database.releaseLeases()
            } catch {
                database.close()
                throw error
            }
        } catch {
            lockFile.unlock()
            throw error
        }
        self.database = database
        visitRecorder = JournalVisitRecorder(
            directory: directory,
            lockFile: lockFile,
            nextSequence: nextSequence,
            database: database,
            durable: durability == .full,
            segmentBytes: journalSegmentBytes,
            memoryLimit: journalMemoryLimit ?? JournalIngester.defaultMemoryLimit
        )
    }

    /// What a command says when it finds no ledger where it was pointed (`Upgrade.never`).
    static func noLedger(at place: String) -> StorageError {
        StorageError(
            .noLedger,
            "no ledger at \(place): commands work on the ledger `linkout serve` made and never make one; give the "
                + "folder (--data-dir, storage.dataDir) or database (storage.postgresURL) the server uses"
        )
    }

    /// Whether a server holds the SQLite data folder `directory` (its journal's lock).
    public static func isServed(directory: String) -> Bool {
        servingProcess(directory: directory) != nil
    }

    /// The process of the server on the SQLite ledger in `directory` (the holder of its lock), if one runs.
    public static func servingProcess(directory: String) -> Int32? {
        JournalFile.lockHolder((directory as NSString).appendingPathComponent(VisitJournal.lockFileName))
    }

    /// Opens the ledger on a PostgreSQL database several instances may share, applying pending migrations.
    /// Visits are committed before the landing answers (group commit, synchronous commit on); there is no
    /// journal, so any instance finds any checkout and a killed instance leaves nothing behind to replay.
    public init(
        postgres target: PostgresTarget,
        upgrade: Upgrade = .migrate,
        clock: Lifecycle.Clock = .system
    ) throws(StorageError) {
        path = target.redactedURL
        let database = try SQLDatabase(postgres: target, upgrade: upgrade, clock: clock)
        do throws(StorageError) {
            visitRecorder = try PostgresVisitRecorder(target: target)
        } catch {
            database.close()
            throw error
        }
        self.database = database
    }

    static func newInstanceName() -> String {
        let host = ProcessInfo.processInfo.hostName
        return "\(host.prefix(64))/\(getpid())/\(UInt32.random(in: .min ... .max))"
    }

    /// Why the ledger cannot record right now, or nil when its last writes went through: on SQLite the journal's
    /// last append failed (a landing gets this error at once), or the tables refuse journaled visits (they wait
    /// in the journal and are retried); on PostgreSQL the last visits' commit failed. `code == .diskFull` when
    /// space ran out. Clears by itself once a write succeeds again; readiness checks (`/readyz`) report it.
    public var writeFailure: StorageError? { visitRecorder.failure }

    /// SQLite's words when the ledger's file was first found damaged in this process (`LedgerDamage`), or nil.
    public var damage: String? { database.damage.noted }

    /// Why landings are refused right now (their visits cannot be made durable), or nil; `writeFailure` also
    /// names tables that refuse visits the journal holds.
    public var landingFailure: StorageError? { visitRecorder.landingFailure }

    /// Looks again at a write failure that only the next landing would clear (the journal's full disk), so a
    /// server taken out of rotation while unready (and sent no landings) turns ready once space is back.
    public func recheckWriteFailure() {
        visitRecorder.recheckFailure()
    }

    /// Commits what is queued and stops the visit recorder and the database. Later writes fail.
    public func close() {
        visitRecorder.close()
        database.close()
    }

    /// Transactions committed since opening (each may carry many writes).
    public var commitCount: Int { database.commitCount + visitRecorder.commitCount }

    /// Records a landing's visit durably; `completion` runs once it is on disk (nil) or with the error that kept
    /// it off, and the landing answers only then. On SQLite the visit reaches the tables moments later; its
    /// checkout is findable at once all the same.
    public func recordVisit(_ visit: Visit, completion: @escaping @Sendable (StorageError?) -> Void) {
        visitRecorder.record(visit, completion: completion)
    }

    /// Waits (up to `timeout`) until every visit recorded so far is in the tables; true when it is.
    /// Reads that must see the latest visits (tests, an export right after traffic) call it first.
    @discardableResult
    package func flush(timeout: Duration = .seconds(5)) -> Bool {
        visitRecorder.flush(timeout: timeout)
    }

    /// Visits acknowledged from the journal but not yet in the tables (none on PostgreSQL).
    public var ingestionBacklog: IngestionBacklog { visitRecorder.backlog }

    /// Most visits waiting for which `awaitRecentVisits` still waits: a small ingester transaction, folded in
    /// moments (a full one of 4,096 takes hundreds of milliseconds on a ledger of millions).
    static let shortBacklog = 1024

    /// Before a read an operator expects to show the visits just made (the token list, the overview): waits up
    /// to 2 s for them when the backlog is short (moments), and answers at once while a burst is being folded in,
    /// when waiting would only make the page late and still miss the newest, and while the disk refuses writes
    /// (full or read-only), when they cannot arrive. Returns what still waits, for the page to say so.
    @discardableResult
    public func awaitRecentVisits() -> IngestionBacklog {
        guard ingestionBacklog.visits <= Self.shortBacklog else { return ingestionBacklog }
        _ = visitRecorder.flushUnlessRefused(timeout: .seconds(2))
        return ingestionBacklog
    }

    /// Called with each batch of recorded visits once it is in the tables.
    public func observeIngestion(_ observer: @escaping @Sendable ([Visit], [RecordOutcome]) -> Void) {
        visitRecorder.observe(IngestionObserver(call: observer))
    }

    /// The nice levels the SQLite writer runs below the server's other threads (`yieldWriterToLandings`).
    public static let writerNiceness: Int32 = 10

    /// Lets landings go first (`linkout serve`): on SQLite the writer's thread, which folds journaled visits into
    /// the tables, runs `writerNiceness` levels below the event loops and the journal. A landing is answered once
    /// its visit is in the journal, so in a burst the fold takes the CPU the landings leave and catches up after
    /// (its backlog is in `/metrics` and `/readyz`, bounded by the ingester's back-pressure), instead of taking a
    /// share that slows every landing; the writer's other writes (payments, reports) still take turns with the
    /// fold's batches, each a fraction of a second. Measured in the README ("Performance"). Nothing on
    /// PostgreSQL, whose server does the fold's work.
    public func yieldWriterToLandings() throws(StorageError) {
        guard database.dialect == .sqlite else { return }
        // Relative to the caller's (the server's threads' own), set as an absolute value: the writer may run a
        // job twice (`GroupCommitWriter.commit`), and twice must not lower it twice.
        let niceness = min(19, ThreadPriority.currentNiceness + Self.writerNiceness)
        let lowered = try database.writer.write { _ in ThreadPriority.setCurrentThread(niceness: niceness) }
        guard lowered else { throw StorageError.system(EPERM, "the writer's priority could not be lowered") }
    }

    /// Proves the ledger takes writes right now (readiness): a one-row write through the same writer as visits.
    public func checkWritable(at: Int64) throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
            try connection.query(
                "INSERT INTO settings (name, value) VALUES ('ready_check', ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                [.text(String(at))]
            )
        }
        visitRecorder.writerCommitted()
    }

    /// Refuses (true) or allows (false) writes, as a read-only disk would. For maintenance windows and for
    /// testing that readiness notices.
    package func suspendWrites(_ suspended: Bool) throws(StorageError) {
        try database.writer.withConnection { [dialect = database.dialect] connection throws(StorageError) in
            try connection.execute(dialect.suspendWrites(suspended))
        }
    }
}
