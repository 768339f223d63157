import Dispatch
import Domain
import Foundation
import Synchronization

/// SQLite's landing path: a visit is acknowledged once it is in the visit journal (`VisitJournal`), folded into
/// the tables moments later by the ingester (`JournalIngester`), and replayed at open if the process died before
/// that. Its checkout is found at once all the same (`pendingCheckout`).
final class JournalVisitRecorder: VisitRecorder {
    /// Most visits applied in one transaction at replay (a long flood can leave many).
    static let replayBatch = 4096

    let journal: VisitJournal
    private let directory: String
    private let ingester: JournalIngester
    private let shared = JournalState()
    private let database: SQLDatabase

    /// Starts the journal and its ingester after a `replay`: `nextSequence` is what the replay returned.
    init(
        directory: String,
        lockFile: JournalFile,
        nextSequence: Int64,
        database: SQLDatabase,
        durable: Bool,
        segmentBytes: Int,
        memoryLimit: Int
    ) {
        self.database = database
        self.directory = directory
        let shared = self.shared
        let ingester = JournalIngester(memoryLimit: memoryLimit) { batch throws(StorageError) in
            try database.applyJournaled(batch)
        } readBack: { first, last, limit in
            shared.readBack(from: first, through: last, limit: limit)
        } onIngested: { batch, outcomes in
            shared.ingested(batch, outcomes)
        } onFailure: { error in
            shared.health.withLock { $0.ingest = error }
        }
        self.ingester = ingester
        journal = VisitJournal(
            directory: directory,
            lockFile: lockFile,
            nextSequence: nextSequence,
            durable: durable,
            segmentBytes: segmentBytes
        ) { batch in
            ingester.enqueue(batch)
        }
        shared.start(journal: journal, applied: nextSequence - 1)
    }

    /// Applies journaled visits the tables have not seen (a crash between acknowledging and ingesting them),
    /// from the lock file (older versions journaled there) and every segment, in sequence order; then deletes
    /// the segments and empties the lock file. Returns the next sequence number. A crash in between repeats
    /// nothing: the tables record the last applied sequence with the visits.
    static func replay(directory: String, lockFile: JournalFile, into database: SQLDatabase) throws(StorageError)
        -> Int64
    {
        var applied = try database.journalApplied()
        let segments = VisitJournal.segmentPaths(in: directory)
        // A file at a time, in sequence order: a long backlog left by a stop is never all in memory at once. Each
        // file is decoded on its own: a torn tail (a crash mid-write) ends only that file's records.
        let files = try segments.map { segment throws(StorageError) in try JournalFile(path: segment.path) }
        for file in [lockFile] + files {
            let records = JournalCoding.decodeAll(try file.readAll())
            try database.applyMissing(records, applied: applied)
            applied = max(applied, records.map(\.sequence).max() ?? 0)
        }
        for segment in segments { unlink(segment.path) }
        try lockFile.truncate()
        return applied + 1
    }

    /// On disk in the journal; the visit reaches the tables moments later (its checkout is findable at once).
    func record(_ visit: Visit, completion: @escaping @Sendable (StorageError?) -> Void) {
        shared.pendingCheckouts.withLock { checkouts in
            checkouts[visit.checkoutId] = CheckoutRecord(
                id: visit.checkoutId,
                bundleId: visit.bundleId,
                externalPurchaseId: visit.token?.token.externalPurchaseId,
                environment: visit.token?.token.environment,
                tokenExpiresAt: visit.token?.token.tokenExpirationDate
            )
        }
        let shared = self.shared
        journal.append(visit) { error in
            // A visit that never reached the disk was not acknowledged; its checkout must not linger.
            if error != nil { shared.pendingCheckouts.withLock { _ = $0.removeValue(forKey: visit.checkoutId) } }
            if error?.code != .closed { shared.health.withLock { $0.journal = error } }
            completion(error)
        }
    }

    /// Through the ledger's writer, outside the journal: the same rows the ingester writes.
    func recordInTables(_ visit: Visit) throws(StorageError) -> RecordOutcome {
        try database.writer.write { connection throws(StorageError) in try TokenStore.insert(visit, into: connection) }
    }

    func pendingCheckout(_ id: CheckoutID) -> CheckoutRecord? {
        shared.pendingCheckouts.withLock { $0[id] }
    }

    func flush(timeout: Duration) -> Bool {
        shared.flush(timeout: timeout)
    }

    var backlog: IngestionBacklog { ingester.backlog }

    func observe(_ observer: IngestionObserver) {
        shared.observer.withLock { $0 = observer }
    }

    /// The journal's last append failed (a landing gets this error at once), or the tables refuse journaled
    /// visits (they wait in the journal and are retried).
    var failure: StorageError? {
        shared.health.withLock { $0.journal ?? $0.ingest }
    }

    /// The journal's last append failed; the tables refusing journaled visits refuses no landing.
    var landingFailure: StorageError? {
        shared.health.withLock { $0.journal }
    }

    /// Landings are acknowledged by the journal, not the writer: a probe's commit says nothing of them.
    func writerCommitted() {}

    /// A full disk, a process out of file descriptors, or a folder that took no new file (its mode, a read-only
    /// mount) refused the last append: cleared once the journal's
    /// folder takes a new file with room for a batch again (an allocation there succeeds), so `/readyz` turns
    /// ready without waiting for a landing (an unready server is sent none). If an append still fails, it sets the
    /// failure again.
    func recheckFailure() {
        guard shared.health.withLock({ $0.journal.map(Self.passes) ?? false }),
            JournalFile.hasRoom(in: directory, bytes: Self.roomForABatch)
        else { return }
        shared.health.withLock { health in
            if health.journal.map(Self.passes) == true { health.journal = nil }
        }
    }

    /// Failures of an append that end by themselves once space or descriptors are free again, or the folder
    /// takes files again (`/readyz` stayed unready after its mode was put back, until a landing came).
    private static func passes(_ failure: StorageError) -> Bool {
        failure.code == .diskFull || [EMFILE, ENFILE, EACCES, EPERM, EROFS].contains(failure.systemError ?? 0)
    }

    /// Room that counts as enough for appends again: a batch of a hundred visits or more.
    static let roomForABatch = 64 << 10

    /// The ingester commits through the ledger's writer, which counts its transactions.
    var commitCount: Int { 0 }

    /// Writes what is queued to the journal, ingests what it can, and releases the folder's lock; what is not
    /// ingested stays in the journal for the next open to replay. The lock goes last: a process taking it while
    /// the ingester still writes would replay, and apply again, what the ingester is applying.
    func close() {
        journal.stop()
        ingester.stop()
        journal.releaseLock()
    }
}

/// One visit from the journal with its sequence number.
package typealias JournalRecord = (sequence: Int64, visit: Visit)
