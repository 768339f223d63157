import Dispatch
import Lifecycle
import Synchronization

/// Folds journaled visits into the tables in large transactions; the engine records in the same transaction how
/// far it got, so a replay never applies a visit twice.
final class JournalIngester: Sendable {
    typealias Batch = [JournalRecord]

    private struct State {
        var queue: Batch = []
        var stopping = false
    }

    /// Most visits per transaction.
    static let maxBatch = 4096

    private let apply: @Sendable (Batch) throws(StorageError) -> [RecordOutcome]
    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    /// Ends a retry's back-off early; only `stop` signals it, so new batches never cut a back-off short.
    private let stopSignal = DispatchSemaphore(value: 0)
    private let onIngested: @Sendable (Batch, [RecordOutcome]) -> Void
    private let onFailure: @Sendable (StorageError) -> Void
    /// Set once in `init`, after every other property (the thread's body needs `self`).
    private let thread = Mutex<BackgroundThread?>(nil)

    /// `apply` commits a batch (and how far the journal is applied) in one transaction; `onIngested` hears of
    /// each committed batch, `onFailure` of each failed attempt (the batch is retried).
    init(
        apply: @escaping @Sendable (Batch) throws(StorageError) -> [RecordOutcome],
        onIngested: @escaping @Sendable (Batch, [RecordOutcome]) -> Void,
        onFailure: @escaping @Sendable (StorageError) -> Void
    ) {
        self.apply = apply
        self.onIngested = onIngested
        self.onFailure = onFailure
        let thread = BackgroundThread(name: "linkout-ingester") { [self] in run() }
        self.thread.withLock { $0 = thread }
    }

    func enqueue(_ batch: Batch) {
        state.withLock { $0.queue.append(contentsOf: batch) }
        available.signal()
    }

    /// Ingests what is queued, then stops.
    func stop() {
        let first = state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        available.signal()
        stopSignal.signal()
        thread.withLock { $0 }?.join()
    }

    private func run() {
        while true {
            available.wait()
            while true {
                let batch = state.withLock { state -> Batch in
                    let count = min(state.queue.count, Self.maxBatch)
                    defer { state.queue.removeFirst(count) }
                    return Array(state.queue.prefix(count))
                }
                if batch.isEmpty { break }
                ingest(batch)
            }
            if state.withLock({ $0.stopping && $0.queue.isEmpty }) { return }
        }
    }

    private func ingest(_ batch: Batch) {
        // A failed transaction (disk full, busy) is retried: these visits were acknowledged and must reach the
        // tables. Backing off on a semaphore lets `stop` end the wait at once.
        var delayMilliseconds = 10
        while true {
            do throws(StorageError) {
                let outcomes = try apply(batch)
                onIngested(batch, outcomes)
                return
            } catch {
                onFailure(error)
                // Stopping with the tables unwritable: the visits stay in the journal and the next open replays them.
                if state.withLock({ $0.stopping }) { return }
                _ = stopSignal.wait(timeout: .now() + .milliseconds(delayMilliseconds))
                delayMilliseconds = min(delayMilliseconds * 2, 500)
            }
        }
    }
}
