import Dispatch
import Domain
import Synchronization

/// What the journal, the ingester and the journal's recorder share.
final class JournalState: Sendable {
    /// Checkouts of visits that are journaled but not yet in the tables, so the page behind a fresh 303 is
    /// found.
    let pendingCheckouts = Mutex<[CheckoutID: CheckoutRecord]>([:])
    /// Told about each ingested batch (metrics of new tokens).
    let observer = Mutex<IngestionObserver?>(nil)
    /// The journal, created after the ingester whose callback needs it.
    private let journal = Mutex<VisitJournal?>(nil)
    /// The highest journal sequence in the tables, and a signal after each ingested batch (for `flush`).
    let applied = Atomic<Int64>(0)
    let progress = ProgressSignal()
    /// The last failure of each write path, cleared by its next success (`writeFailure`).
    let health = Mutex(Health())

    struct Health {
        var journal: StorageError?
        var ingest: StorageError?
    }

    /// Journaled records the ingester let go of from memory, read back from the journal's segments.
    func readBack(from first: Int64, through last: Int64, limit: Int) -> [JournalRecord] {
        journal.withLock { $0 }?.readBack(from: first, through: last, limit: limit) ?? []
    }

    func start(journal: VisitJournal, applied: Int64) {
        self.journal.withLock { $0 = journal }
        self.applied.store(applied, ordering: .relaxed)
    }

    /// A batch reached the tables: its checkouts are found there now, and the journal may drop it.
    func ingested(_ batch: [JournalRecord], _ outcomes: [RecordOutcome]) {
        pendingCheckouts.withLock { checkouts in
            for record in batch { checkouts.removeValue(forKey: record.visit.checkoutId) }
            // A dictionary keeps the capacity it once needed: after a long backlog, give the memory back.
            if checkouts.capacity > 65536 && checkouts.count * 8 < checkouts.capacity {
                checkouts = Dictionary(uniqueKeysWithValues: checkouts.map { ($0.key, $0.value) })
            }
        }
        health.withLock { $0.ingest = nil }
        // Observed (counted in the metrics) before `applied` moves, so a `flush` that returns has seen it.
        observer.withLock { $0 }?.call(batch.map(\.visit), outcomes)
        if let last = batch.last?.sequence {
            journal.withLock { $0 }?.markApplied(last)
            applied.store(last, ordering: .relaxed)
        }
        progress.signal()
    }

    /// Waits (up to `timeout`) until every visit journaled so far is in the tables; true when it is.
    /// Reads that must see the latest visits (tests, an export right after traffic) call it first.
    @discardableResult
    func flush(timeout: Duration) -> Bool {
        guard let journal = journal.withLock({ $0 }) else { return true }
        let target = journal.lastAssigned
        let deadline = ContinuousClock.now + timeout
        while true {
            // Visits whose append failed were never acknowledged and never reach the tables: not waited for. Under
            // steady landings `written` runs ahead of `target`; only what was journaled before the call counts.
            if let written = journal.written(through: target), applied.load(ordering: .relaxed) >= min(target, written)
            {
                return true
            }
            guard ContinuousClock.now < deadline else { return false }
            progress.wait(milliseconds: 20)
        }
    }
}
