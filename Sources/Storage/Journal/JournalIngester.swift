import Dispatch
import Lifecycle
import Synchronization

/// Folds journaled visits into the tables in large transactions; the engine records in the same transaction how
/// far it got, so a replay never applies a visit twice.
final class JournalIngester: Sendable {
    typealias Batch = [JournalRecord]

    private struct State {
        /// Visits waiting, from `head` on: taking a batch moves `head` instead of shifting what follows, so a
        /// long backlog costs the same per batch as a short one.
        var queue: Batch = []
        var head = 0
        /// The batch being committed: still waiting as far as the backlog is concerned.
        var inFlight = 0
        var inFlightOldestAt: Int64?
        /// The last attempt failed: back-pressure is off, since the queue may not drain.
        var failing = false
        var stopping = false

        var waiting: Int { queue.count - head + inFlight }

        /// Up to `limit` visits from the front, counted as in flight until `finished`.
        mutating func take(_ limit: Int) -> Batch {
            let end = min(head + limit, queue.count)
            let batch = Array(queue[head..<end])
            head = end
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 65536 && head * 2 >= queue.count {
                // The front is dead weight once it is half the array: dropped in one copy, not per batch.
                queue.removeFirst(head)
                head = 0
            }
            inFlight = batch.count
            inFlightOldestAt = batch.first?.visit.at
            return batch
        }
    }

    /// Most visits per transaction.
    static let maxBatch = 4096

    /// Most visits waiting before the journal's writer waits for room (back-pressure): landings then wait for
    /// ingestion, so a flood longer than the ingester can take slows landings down instead of growing memory
    /// without bound. About 10 s of landings at full speed: bursts are taken whole.
    static let defaultBacklogLimit = 200_000

    private let backlogLimit: Int

    private let apply: @Sendable (Batch) throws(StorageError) -> [RecordOutcome]
    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    /// Signalled after each committed batch, for an `enqueue` waiting for room.
    private let room = DispatchSemaphore(value: 0)
    /// Ends a retry's back-off early; only `stop` signals it, so new batches never cut a back-off short.
    private let stopSignal = DispatchSemaphore(value: 0)
    private let onIngested: @Sendable (Batch, [RecordOutcome]) -> Void
    private let onFailure: @Sendable (StorageError) -> Void
    /// Set once in `init`, after every other property (the thread's body needs `self`).
    private let thread = Mutex<BackgroundThread?>(nil)

    /// `apply` commits a batch (and how far the journal is applied) in one transaction; `onIngested` hears of
    /// each committed batch, `onFailure` of each failed attempt (the batch is retried).
    init(
        backlogLimit: Int = defaultBacklogLimit,
        apply: @escaping @Sendable (Batch) throws(StorageError) -> [RecordOutcome],
        onIngested: @escaping @Sendable (Batch, [RecordOutcome]) -> Void,
        onFailure: @escaping @Sendable (StorageError) -> Void
    ) {
        self.backlogLimit = backlogLimit
        self.apply = apply
        self.onIngested = onIngested
        self.onFailure = onFailure
        let thread = BackgroundThread(name: "linkout-ingester") { [self] in run() }
        self.thread.withLock { $0 = thread }
    }

    /// Queues visits that are on disk in the journal. Past `backlogLimit` waiting, returns only once the
    /// ingester made room (or fails, or stops: a stalled ingester must not stop landings being journaled).
    func enqueue(_ batch: Batch) {
        state.withLock { $0.queue.append(contentsOf: batch) }
        available.signal()
        while state.withLock({ $0.waiting > backlogLimit && !$0.failing && !$0.stopping }) {
            _ = room.wait(timeout: .now() + .milliseconds(100))
        }
    }

    /// What waits to be folded in, the batch being committed included.
    var backlog: IngestionBacklog {
        state.withLock { state in
            let oldest = state.inFlight > 0 ? state.inFlightOldestAt : state.queue[state.head...].first?.visit.at
            return IngestionBacklog(visits: state.waiting, oldestAt: oldest)
        }
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
                let batch = state.withLock { $0.take(Self.maxBatch) }
                if batch.isEmpty { break }
                ingest(batch)
                state.withLock { $0.inFlight = 0 }
                room.signal()
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
                state.withLock { $0.failing = false }
                onIngested(batch, outcomes)
                return
            } catch {
                state.withLock { $0.failing = true }
                onFailure(error)
                // Stopping with the tables unwritable: the visits stay in the journal and the next open replays them.
                if state.withLock({ $0.stopping }) { return }
                _ = stopSignal.wait(timeout: .now() + .milliseconds(delayMilliseconds))
                delayMilliseconds = min(delayMilliseconds * 2, 500)
            }
        }
    }
}
