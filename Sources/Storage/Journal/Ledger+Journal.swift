import Dispatch
import Domain
import Foundation
import Synchronization

/// The landing path's durable record: the visit journal, its replay at open and its ingestion into the tables.
extension Ledger {
    /// Most visits applied in one transaction at replay (a long flood can leave many).
    static let replayBatch = 4096

    /// Applies journaled visits the tables have not seen (a crash between acknowledging and ingesting them),
    /// from the lock file (older versions journaled there) and every segment, in sequence order; then deletes
    /// the segments and empties the lock file. Returns the next sequence number. A crash in between repeats
    /// nothing: the tables record the last applied sequence with the visits.
    static func replay(directory: String, lockFile: JournalFile, into database: SQLDatabase) throws(StorageError)
        -> Int64
    {
        let applied = try database.journalApplied()
        let segments = VisitJournal.segmentPaths(in: directory)
        var records = JournalCoding.decodeAll(try lockFile.readAll())
        for segment in segments {
            // Each file is decoded on its own: a torn tail (a crash mid-write) ends only that file's records.
            let file = try JournalFile(path: segment.path)
            records += JournalCoding.decodeAll(try file.readAll())
        }
        try database.applyMissing(records, applied: applied)
        for segment in segments { unlink(segment.path) }
        try lockFile.truncate()
        return max(applied, records.map(\.sequence).max() ?? 0) + 1
    }

    /// Records a landing visit durably in the journal; `completion` runs once it is on disk. The visit reaches
    /// the tables moments later (the checkout is findable at once).
    public func journalVisit(_ visit: Visit, completion: @escaping @Sendable (StorageError?) -> Void) {
        guard let journal else {
            guard recordsVisitsDirectly else {
                completion(StorageError(.readOnly, "this ledger was opened read-only; only the server records visits"))
                return
            }
            recordDirectly(visit, completion: completion)
            return
        }
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

    /// A visit committed to the tables in the writer's next group commit (no journal on this engine).
    private func recordDirectly(_ visit: Visit, completion: @escaping @Sendable (StorageError?) -> Void) {
        let shared = self.shared
        tokens.submitVisit(visit) { result in
            switch result {
            case .success(let outcome):
                shared.health.withLock { $0.journal = nil }
                shared.observer.withLock { $0 }?.call([visit], [outcome])
                completion(nil)
            case .failure(let error):
                if error.code != .closed { shared.health.withLock { $0.journal = error } }
                completion(error)
            }
        }
    }

    /// Waits (up to `timeout`) until every visit journaled so far is in the tables; true when it is.
    /// Reads that must see the latest visits (tests, an export right after traffic) call it first.
    @discardableResult
    package func flush(timeout: Duration = .seconds(5)) -> Bool {
        shared.flush(timeout: timeout)
    }

    /// Called with each batch of journaled visits once it is in the tables.
    public func observeIngestion(_ observer: @escaping @Sendable ([Visit], [RecordOutcome]) -> Void) {
        shared.observer.withLock { $0 = IngestionObserver(call: observer) }
    }

    /// Who is told about recorded visits, in a box of its own (see `JournalState.observer`).
    final class IngestionObserver: Sendable {
        let call: @Sendable ([Visit], [RecordOutcome]) -> Void
        init(call: @escaping @Sendable ([Visit], [RecordOutcome]) -> Void) { self.call = call }
    }
}

/// One visit from the journal with its sequence number.
package typealias JournalRecord = (sequence: Int64, visit: Visit)
