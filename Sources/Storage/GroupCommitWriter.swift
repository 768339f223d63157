import Dispatch
import Foundation
import Synchronization

/// The ledger's single writer: a thread that takes every write queued since its last commit and runs them in one
/// transaction, so concurrent visits share one fsync instead of paying one each. A job's completion runs only
/// after the COMMIT that carries it has returned, which is what lets a response wait for durability.
final class GroupCommitWriter: Sendable {
    typealias Finisher = @Sendable (_ commitError: StorageError?) -> Void

    private struct Pending: Sendable {
        /// Completes the job with an error without running it (the transaction could not begin).
        let abort: @Sendable (StorageError) -> Void
        let run: @Sendable (SQLiteConnection) -> Finisher
    }

    private struct Queue {
        var jobs: [Pending] = []
        var stopping = false
    }

    /// Most jobs in one transaction; bounds the latency a large backlog adds to the first job in it.
    static let maxBatch = 512

    private let connection: Mutex<SQLiteConnection>
    private let queue = Mutex(Queue())
    private let available = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let commits = Atomic<Int>(0)

    init(connection: sending SQLiteConnection) {
        self.connection = Mutex(connection)
        let thread = Thread { [self] in
            self.run()
            self.stopped.signal()
        }
        thread.name = "linkout-ledger-writer"
        thread.start()
    }

    /// Transactions committed so far (a batch counts once).
    var commitCount: Int { commits.load(ordering: .relaxed) }

    /// Queues `body` to run inside the next batch; `completion` gets its result once the batch is committed.
    func submit<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) throws(StorageError) -> T,
        completion: @escaping @Sendable (Result<T, StorageError>) -> Void
    ) {
        let pending = Pending(abort: { completion(.failure($0)) }) { connection in
            // A savepoint per job: one job's failure rolls back only that job, not the batch it shares.
            let result: Result<T, StorageError>
            do throws(StorageError) {
                try connection.query("SAVEPOINT job")
                let value = try body(connection)
                try connection.query("RELEASE job")
                result = .success(value)
            } catch {
                _ = try? connection.query("ROLLBACK TO job")
                _ = try? connection.query("RELEASE job")
                result = .failure(error)
            }
            return { commitError in completion(commitError.map { .failure($0) } ?? result) }
        }
        let accepted = queue.withLock { queue in
            guard !queue.stopping else { return false }
            queue.jobs.append(pending)
            return true
        }
        guard accepted else {
            completion(.failure(StorageError(code: -1, message: "the ledger is closed")))
            return
        }
        available.signal()
    }

    /// Runs `body` in the next batch and blocks until it is committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws(StorageError) -> T)
        throws(StorageError)
        -> T
    {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<T, StorageError>?>(nil)
        submit(body) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        guard let result = outcome.withLock({ $0 }) else {
            throw StorageError(code: -1, message: "write finished without a result")
        }
        return try result.get()
    }

    /// Commits what is queued, then stops the thread.
    func stop() {
        queue.withLock { $0.stopping = true }
        available.signal()
        stopped.wait()
    }

    private func run() {
        while true {
            available.wait()
            let (batch, stopping) = queue.withLock { queue in
                let count = min(queue.jobs.count, Self.maxBatch)
                let batch = Array(queue.jobs.prefix(count))
                queue.jobs.removeFirst(count)
                return (batch, queue.stopping && queue.jobs.isEmpty)
            }
            if !batch.isEmpty {
                commit(batch)
                if queue.withLock({ !$0.jobs.isEmpty }) { available.signal() }
            }
            if stopping { return }
        }
    }

    private func commit(_ batch: [Pending]) {
        connection.withLock { connection in
            do throws(StorageError) {
                try connection.query("BEGIN IMMEDIATE")
            } catch {
                for pending in batch { pending.abort(error) }
                return
            }
            let finishers = batch.map { $0.run(connection) }
            var commitError: StorageError?
            do throws(StorageError) {
                try connection.query("COMMIT")
                commits.add(1, ordering: .relaxed)
            } catch {
                commitError = error
                _ = try? connection.query("ROLLBACK")
            }
            for finish in finishers { finish(commitError) }
        }
    }
}
