import Dispatch
import Lifecycle
import Synchronization

/// Folds journaled visits into the tables in large transactions; the engine records in the same transaction how
/// far it got, so a replay never applies a visit twice.
final class JournalIngester: Sendable {
    typealias Batch = [JournalRecord]
    /// Reads journaled records from the first sequence through the second, at most the given number.
    typealias ReadBack = @Sendable (Int64, Int64, Int) -> Batch

    private struct State {
        var queue: IngestionQueue
        /// The last attempt failed: the journal's writer does not wait for room, since none may come.
        var failing = false
        var stopping = false
    }

    /// Most visits per transaction.
    static let maxBatch = 4096

    /// Most visits held in memory; past them the journal alone holds what waits (`IngestionQueue`). About ten
    /// seconds of landings at full speed, some 200 MB: a burst is taken from memory, a longer flood from disk.
    static let defaultMemoryLimit = 200_000

    /// Most visits waiting in all before the journal's writer waits for room (back-pressure). Each waiting visit
    /// keeps its checkout in memory (`JournalState.pendingCheckouts`, some 350 bytes), so the page behind its
    /// 303 is found: past this, landings are answered at the pace the tables take them, and memory stays
    /// bounded. About half a minute of landings at full speed.
    static let defaultWaitingLimit = 600_000

    /// Most visits read back from the journal at once: a segment's worth, so each segment is decoded about once.
    static let readBackLimit = 8 * maxBatch

    private let waitingLimit: Int
    private let apply: @Sendable (Batch) throws(StorageError) -> [RecordOutcome]
    private let readBack: ReadBack
    private let state: Mutex<State>
    private let available = DispatchSemaphore(value: 0)
    /// Signalled after each committed batch, for an `enqueue` waiting for room.
    private let room = ProgressSignal()
    /// Ends a retry's back-off early; only `stop` signals it, so new batches never cut a back-off short.
    private let stopSignal = DispatchSemaphore(value: 0)
    private let onIngested: @Sendable (Batch, [RecordOutcome]) -> Void
    private let onFailure: @Sendable (StorageError) -> Void
    /// Set once in `init`, after every other property (the thread's body needs `self`).
    private let thread = Mutex<BackgroundThread?>(nil)

    /// `apply` commits a batch (and how far the journal is applied) in one transaction; `readBack` reads what
    /// memory let go of from the journal; `onIngested` hears of each committed batch, `onFailure` of each failed
    /// attempt (the batch is retried).
    init(
        memoryLimit: Int = defaultMemoryLimit,
        waitingLimit: Int = defaultWaitingLimit,
        apply: @escaping @Sendable (Batch) throws(StorageError) -> [RecordOutcome],
        readBack: @escaping ReadBack,
        onIngested: @escaping @Sendable (Batch, [RecordOutcome]) -> Void,
        onFailure: @escaping @Sendable (StorageError) -> Void
    ) {
        self.waitingLimit = waitingLimit
        self.apply = apply
        self.readBack = readBack
        self.onIngested = onIngested
        self.onFailure = onFailure
        state = Mutex(State(queue: IngestionQueue(memoryLimit: memoryLimit)))
        let thread = BackgroundThread(name: "linkout-ingester") { [self] in run() }
        self.thread.withLock { $0 = thread }
    }

    /// Queues visits that are on disk in the journal. Past `waitingLimit` waiting, returns only once the
    /// ingester made room (or fails, or stops: a stalled ingester must not stop landings being journaled).
    func enqueue(_ batch: Batch) {
        state.withLock { $0.queue.add(batch) }
        available.signal()
        while state.withLock({ $0.queue.waiting > waitingLimit && !$0.failing && !$0.stopping }) {
            room.wait(milliseconds: 100)
        }
    }

    /// What waits to be folded in, the batch being committed included.
    var backlog: IngestionBacklog {
        state.withLock { $0.queue.backlog }
    }

    /// Ingests what memory holds, then stops. What only the journal holds stays there for the next open to
    /// replay: a long backlog must not hold up a shutdown.
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
            // A batch given up at a stop ends the ingesting: a later one committed would move the tables'
            // `journal_applied` past it, and the next open's replay would skip it.
            draining: while true {
                let next = state.withLock { state -> IngestionQueue.Next in
                    let next = state.queue.next(Self.maxBatch)
                    if case .onDisk = next, state.stopping { return .nothing }
                    return next
                }
                switch next {
                case .nothing: break draining
                case .inMemory(let batch): guard ingest(batch) else { return }
                case .onDisk(let first, let last): guard ingestFromDisk(first, last) else { return }
                }
            }
            if state.withLock({ $0.stopping }) { return }
        }
    }

    /// Reads back what only the journal holds and commits it batch by batch; false when a batch was given up
    /// at a stop. Nothing read (a segment that cannot be read) is a failed attempt, retried after a back-off.
    private func ingestFromDisk(_ first: Int64, _ last: Int64) -> Bool {
        let records = readBack(first, last, Self.readBackLimit)
        guard !records.isEmpty else {
            state.withLock { $0.failing = true }
            onFailure(StorageError(.journal, "journaled visits \(first)–\(last) could not be read back"))
            _ = stopSignal.wait(timeout: .now() + .milliseconds(500))
            return true
        }
        var start = 0
        while start < records.count && !state.withLock({ $0.stopping }) {
            let batch = Array(records[start..<min(start + Self.maxBatch, records.count)])
            state.withLock { $0.queue.tookFromDisk(batch) }
            guard ingest(batch) else { return false }
            start += batch.count
        }
        return true
    }

    /// Commits `batch`, retrying failures; false when it was given up at a stop.
    private func ingest(_ batch: Batch) -> Bool {
        defer {
            state.withLock { $0.queue.finished() }
            room.signal()
        }
        // A failed transaction (disk full, busy) is retried: these visits were acknowledged and must reach the
        // tables. Backing off on a semaphore lets `stop` end the wait at once.
        var delayMilliseconds = 10
        while true {
            do throws(StorageError) {
                let outcomes = try apply(batch)
                state.withLock { $0.failing = false }
                onIngested(batch, outcomes)
                return true
            } catch {
                state.withLock { $0.failing = true }
                onFailure(error)
                // Stopping with the tables unwritable: the visits stay in the journal and the next open replays them.
                if state.withLock({ $0.stopping }) { return false }
                _ = stopSignal.wait(timeout: .now() + .milliseconds(delayMilliseconds))
                delayMilliseconds = min(delayMilliseconds * 2, 500)
            }
        }
    }
}
