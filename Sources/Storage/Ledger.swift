import Foundation
import Lifecycle

/// The durable record of every token, visit, checkout and report, under one data folder.
///
/// Writes return (or complete) only once committed, so a caller that answers only then never acknowledges
/// anything that a crash could lose. Landing visits take a faster durable path: the visit journal (see
/// `VisitJournal`), folded into the tables moments later and replayed at open. The tables live in a
/// `LedgerEngine` (SQLite today); this type holds what does not depend on the engine.
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

    /// The SQLite database file.
    let path: String
    let engine: any LedgerEngine
    let journal: VisitJournal?
    let ingester: JournalIngester?
    let shared = JournalState()

    /// Opens (creating if needed) `directory/linkout.sqlite`, applies pending migrations and, as the owner,
    /// replays the visit journal.
    public init(
        directory: String,
        durability: Durability = .full,
        role: Role = .owner,
        clock: Lifecycle.Clock = .system
    ) throws(StorageError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StorageError(.dataFolder, "cannot create data folder \(directory): \(error.localizedDescription)")
        }
        path = (directory as NSString).appendingPathComponent("linkout.sqlite")
        guard role == .owner else {
            engine = try SQLiteEngine(path: path, durability: durability, clock: clock)
            journal = nil
            ingester = nil
            return
        }
        let journalFile = try JournalFile(path: (directory as NSString).appendingPathComponent("visits.journal"))
        // A second server on the same folder would replay and truncate a journal the first one is writing.
        try journalFile.lockExclusively()
        let engine = try SQLiteEngine(path: path, durability: durability, clock: clock)
        self.engine = engine
        let nextSequence: Int64
        do throws(StorageError) {
            nextSequence = try Self.replay(journalFile, into: engine)
        } catch {
            engine.close()
            journalFile.unlock()
            throw error
        }
        let shared = self.shared
        let ingester = JournalIngester { batch throws(StorageError) in
            try engine.applyJournaled(batch)
        } onIngested: { batch, outcomes in
            shared.ingested(batch, outcomes)
        }
        self.ingester = ingester
        let journal = VisitJournal(file: journalFile, nextSequence: nextSequence, durable: durability == .full) {
            batch in
            ingester.enqueue(batch)
        }
        self.journal = journal
        shared.start(journal: journal, applied: nextSequence - 1)
    }

    /// Commits what is queued and stops the journal, the ingester and the engine. Later writes fail.
    public func close() {
        journal?.stop()
        ingester?.stop()
        engine.close()
    }

    /// Transactions committed since opening (each may carry many writes).
    public var commitCount: Int { engine.commitCount }
}
