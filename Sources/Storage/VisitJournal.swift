import Dispatch
import Lifecycle
import Synchronization

/// The landing path's durable write: an append-only file where each batch of visits is one `write(2)` and one
/// `fdatasync(2)`. A visit is acknowledged once its batch is on disk; the ledger's ingester then folds it into
/// SQLite in large transactions, and replays whatever it had not folded in when the process died.
///
/// Why: a SQLite commit rewrites every b-tree page a batch touches (random keys touch many), so small frequent
/// commits cost far more than one sequential append of the same visits.
final class VisitJournal: Sendable {
    typealias Completion = @Sendable (StorageError?) -> Void

    private struct Pending {
        var record: [UInt8]
        var sequence: Int64
        var visit: Visit
        var completion: Completion
    }

    private struct State {
        var pending: [Pending] = []
        var nextSequence: Int64
        var stopping = false
        /// Highest sequence written, and highest the ingester has committed to SQLite.
        var written: Int64
        var applied: Int64
    }

    /// When every record is in SQLite and the file is bigger than this, it is truncated to zero.
    static let truncateAbove = 16 << 20

    private let file: JournalFile
    private let durable: Bool
    private let state: Mutex<State>
    private let available = DispatchSemaphore(value: 0)
    private let onDurable: @Sendable ([JournalRecord]) -> Void
    /// Set once in `init`, after every other property (the thread's body needs `self`).
    private let thread = Mutex<BackgroundThread?>(nil)

    /// `onDurable` receives each batch once it is on disk (the ingester's queue).
    init(
        file: JournalFile,
        nextSequence: Int64,
        durable: Bool,
        onDurable: @escaping @Sendable ([JournalRecord]) -> Void
    ) {
        self.file = file
        self.durable = durable
        self.onDurable = onDurable
        state = Mutex(State(nextSequence: nextSequence, written: nextSequence - 1, applied: nextSequence - 1))
        let thread = BackgroundThread(name: "linkout-journal") { [self] in run() }
        self.thread.withLock { $0 = thread }
    }

    /// Queues a visit; `completion` runs once it is on disk (or with the error that kept it off).
    func append(_ visit: Visit, completion: @escaping Completion) {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            let sequence = state.nextSequence
            state.nextSequence += 1
            state.pending.append(
                Pending(
                    record: JournalCoding.encode(visit, sequence: sequence),
                    sequence: sequence,
                    visit: visit,
                    completion: completion
                )
            )
            return true
        }
        guard accepted else {
            completion(StorageError(.closed, "the ledger is closed"))
            return
        }
        available.signal()
    }

    /// The sequence of the last visit appended (written or about to be).
    var lastAssigned: Int64 { state.withLock { $0.nextSequence - 1 } }

    /// The ingester committed everything up to `sequence` to SQLite.
    func markApplied(_ sequence: Int64) {
        state.withLock { $0.applied = max($0.applied, sequence) }
    }

    /// Writes what is queued, then stops.
    func stop() {
        let first = state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        available.signal()
        thread.withLock { $0 }?.join()
        file.unlock()
    }

    private func run() {
        while true {
            available.wait()
            let (batch, stopping) = state.withLock { state in
                defer { state.pending.removeAll(keepingCapacity: true) }
                return (state.pending, state.stopping)
            }
            if !batch.isEmpty { write(batch) }
            truncateIfAllApplied()
            if stopping && state.withLock({ $0.pending.isEmpty }) { return }
        }
    }

    private func write(_ batch: [Pending]) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(batch.reduce(0) { $0 + $1.record.count })
        for pending in batch { bytes.append(contentsOf: pending.record) }
        var failure: StorageError?
        do throws(StorageError) {
            try file.append(bytes)
            if durable { try file.sync() }
        } catch {
            failure = error
        }
        if failure == nil {
            state.withLock { $0.written = batch.last?.sequence ?? $0.written }
            onDurable(batch.map { ($0.sequence, $0.visit) })
        }
        for pending in batch { pending.completion(failure) }
    }

    private func truncateIfAllApplied() {
        let caughtUp = state.withLock { $0.applied >= $0.written }
        guard caughtUp, file.size > Self.truncateAbove else { return }
        try? file.truncate()
    }
}
