import Dispatch
import Lifecycle
import Synchronization

/// The ledger's single writer: a thread that takes every write queued since its last commit and runs them in one
/// transaction, so concurrent visits share one fsync instead of paying one each. A job's completion runs only
/// after the COMMIT that carries it has returned, which is what lets a response wait for durability.
final class GroupCommitWriter: Sendable {
    typealias Finisher = @Sendable (_ commitError: StorageError?) -> Void

    /// A queued job. `run` executes it inside the current transaction and returns how to report the outcome
    /// once that transaction has ended; it may run more than once (see `commit`), so jobs only read and write the
    /// database.
    private struct Pending: Sendable {
        /// Completes the job with an error without running it (the transaction could not begin).
        let abort: @Sendable (StorageError) -> Void
        let run: @Sendable (any SQLConnection) -> Outcome
    }

    /// How a job's run ended: its error, if it threw, and how to report it once the transaction has ended.
    private struct Outcome {
        var error: StorageError?
        var finish: Finisher
        var failed: Bool { error != nil }
    }

    /// Runs of a job alone that PostgreSQL may roll back to let another writer go on (a deadlock with another
    /// instance's landing batch, say) before its error is the job's answer. Each such run committed nothing, and
    /// the other writer has gone on by the next; an answer from Apple was "not recorded" when the one run alone
    /// met a second deadlock.
    static let runsAloneLostToAnotherWriter = 5

    /// Most jobs in one transaction; bounds the latency a large backlog adds to the first job in it.
    static let maxBatch = 512

    private let connection: Mutex<any SQLConnection>
    private let commits = Atomic<Int>(0)
    /// Set once in `init`, after `connection` (the queue's thread needs `self`).
    private let queue = Mutex<BatchQueue<Pending>?>(nil)

    init(connection: sending any SQLConnection) {
        self.connection = Mutex(connection)
        let queue = BatchQueue<Pending>(name: "linkout-ledger-writer", maxBatch: Self.maxBatch) { [self] batch in
            commit(batch)
        }
        self.queue.withLock { $0 = queue }
    }

    /// Transactions committed so far (a batch counts once).
    var commitCount: Int { commits.load(ordering: .relaxed) }

    /// Queues `body` to run inside the next batch; `completion` gets its result once the batch is committed.
    func submit<T: Sendable>(
        _ body: @escaping @Sendable (any SQLConnection) throws(StorageError) -> T,
        completion: @escaping @Sendable (Result<T, StorageError>) -> Void
    ) {
        let pending = Pending(abort: { completion(.failure($0)) }) { connection in
            let result: Result<T, StorageError>
            do throws(StorageError) {
                result = .success(try body(connection))
            } catch {
                result = .failure(error)
            }
            let finish: Finisher = { commitError in completion(commitError.map { .failure($0) } ?? result) }
            if case .failure(let error) = result { return Outcome(error: error, finish: finish) }
            return Outcome(error: nil, finish: finish)
        }
        guard queue.withLock({ $0 })?.submit(pending) == true else {
            completion(.failure(StorageError(.closed, "the ledger is closed")))
            return
        }
    }

    /// Runs `body` in the next batch and blocks until it is committed.
    @discardableResult
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLConnection) throws(StorageError) -> T)
        throws(StorageError)
        -> T
    {
        try waitForCompletion { completion in submit(body, completion: completion) }
    }

    /// Runs `body` on the writer's connection outside any transaction, between batches (connection settings such
    /// as `query_only`, which cannot be changed inside a transaction's commit).
    func withConnection(_ body: (any SQLConnection) throws(StorageError) -> Void) throws(StorageError) {
        try connection.withLock { connection throws(StorageError) in try body(connection) }
    }

    /// Commits what is queued, then stops the thread.
    func stop() {
        // Taken out, not just stopped: the queue's thread holds this writer, so keeping the queue would keep
        // both (and the connection, a server session on PostgreSQL) alive after the ledger is closed.
        queue.withLock { queue in
            defer { queue = nil }
            return queue
        }?.stop()
    }

    /// Runs the batch in one transaction. If a job fails, the batch is rolled back and every job runs again in
    /// a transaction of its own, so one bad write never takes its neighbours down (and none commits half-done).
    /// This replaces a savepoint per job, which cost two extra statements on every visit.
    private func commit(_ batch: [Pending]) {
        connection.withLock { connection in
            if !runTogether(batch, connection) {
                for pending in batch { runAlone(pending, connection) }
            }
        }
    }

    /// One job in a transaction of its own, run again while PostgreSQL rolls it back for another writer's sake.
    private func runAlone(_ pending: Pending, _ connection: any SQLConnection) {
        for _ in 1..<Self.runsAloneLostToAnotherWriter {
            if runTogether([pending], connection, isolated: true, unlessLostToAnotherWriter: true) { return }
        }
        _ = runTogether([pending], connection, isolated: true)
    }

    /// One transaction for `batch`; false when a job failed and the batch was rolled back unreported (a batch of
    /// several, or a job alone that PostgreSQL rolled back for another writer when `unlessLostToAnotherWriter`).
    private func runTogether(
        _ batch: [Pending],
        _ connection: any SQLConnection,
        isolated: Bool = false,
        unlessLostToAnotherWriter: Bool = false
    ) -> Bool {
        do throws(StorageError) {
            try connection.begin()
        } catch {
            for pending in batch { pending.abort(error) }
            return true
        }
        var outcomes: [Outcome] = []
        for pending in batch {
            let outcome = pending.run(connection)
            outcomes.append(outcome)
            // A failure that ended the transaction (SQLite's rollback after SQLITE_FULL, a lost session): the jobs
            // after it would each commit on their own, outside any transaction, and again when the batch is rerun.
            if outcome.failed && !connection.isInTransaction { break }
        }
        if (!isolated && outcomes.contains(where: \.failed))
            || (unlessLostToAnotherWriter && outcomes.contains(where: { $0.error?.isLostToAnotherWriter == true }))
        {
            try? connection.rollback()
            return false
        }
        var commitError: StorageError?
        do throws(StorageError) {
            // A lone failed job leaves nothing worth keeping; its error is reported below.
            if outcomes.contains(where: \.failed) {
                try connection.rollback()
            } else {
                try connection.commit()
            }
            commits.add(1, ordering: .relaxed)
        } catch {
            commitError = error
            try? connection.rollback()
        }
        for outcome in outcomes { outcome.finish(commitError) }
        return true
    }
}
