import Dispatch
import Lifecycle
import Synchronization

/// A fixed set of threads that run blocking work (SQLite, libcurl, disk) off the event loops.
///
/// Jobs queue without bound in memory; the number of jobs is bounded by the connection cap, because each
/// connection has at most one request in a handler at a time.
final class WorkerPool: Sendable {
    typealias Job = @Sendable () -> Void

    private let queue = Queue()
    private let threads: [BackgroundThread]

    init(threads count: Int, name: String = "linkout-worker") {
        let queue = queue
        threads = (0..<max(1, count)).map { index in
            BackgroundThread(name: "\(name)-\(index)") { queue.runJobs() }
        }
    }

    func submit(_ job: @escaping Job) {
        queue.push(job)
    }

    /// Queues `job` unless `limit` jobs already wait for a thread (checked and queued under one lock, so
    /// submitters on several event loops never pass the limit together). False when it was not queued.
    func submit(_ job: @escaping Job, whileFewerWaitThan limit: Int) -> Bool {
        queue.push(job, whileFewerWaitThan: limit)
    }

    /// The jobs no thread has taken yet, taken out of the queue (to run elsewhere).
    func takeWaiting() -> [Job] {
        queue.takeWaiting()
    }

    /// Lets queued jobs finish, then ends every thread and waits for them.
    func stop() {
        finish()
        join()
    }

    /// Lets queued jobs finish and ends each thread once the queue is empty, without waiting (`join` waits): a
    /// server stopping several pools lets them drain at once.
    func finish() {
        queue.stop(threads: threads.count)
    }

    func join() {
        for thread in threads { thread.join() }
    }

    /// The jobs waiting for a thread, shared by the threads and the submitters.
    private final class Queue: Sendable {
        private struct State {
            /// Taken jobs are cleared at once: a job holds its request, body included, and a queue that kept run
            /// jobs until it compacted kept a thousand request bodies alive after their answers.
            var jobs: [Job?] = []
            var head = 0
            var stopping = false
        }

        private let state = Mutex(State())
        private let available = DispatchSemaphore(value: 0)

        func push(_ job: @escaping Job) {
            state.withLock { $0.jobs.append(job) }
            available.signal()
        }

        func push(_ job: @escaping Job, whileFewerWaitThan limit: Int) -> Bool {
            let queued = state.withLock { state in
                guard state.jobs.count - state.head < limit else { return false }
                state.jobs.append(job)
                return true
            }
            if queued { available.signal() }
            return queued
        }

        func takeWaiting() -> [Job] {
            state.withLock { state in
                defer {
                    state.jobs.removeAll(keepingCapacity: false)
                    state.head = 0
                }
                return state.jobs[state.head...].compactMap { $0 }
            }
        }

        func stop(threads: Int) {
            state.withLock { $0.stopping = true }
            for _ in 0..<threads { available.signal() }
        }

        /// Runs jobs until stopped and the queue is empty.
        func runJobs() {
            while true {
                available.wait()
                let job: Job? = state.withLock { state in
                    guard state.head < state.jobs.count else { return nil }
                    let job = state.jobs[state.head]
                    state.jobs[state.head] = nil
                    state.head += 1
                    if state.head == state.jobs.count {
                        state.jobs.removeAll(keepingCapacity: state.jobs.capacity <= 1024)
                        state.head = 0
                    } else if state.head > 1024 && state.head * 2 > state.jobs.count {
                        state.jobs.removeFirst(state.head)
                        state.head = 0
                    }
                    return job
                }
                if let job {
                    job()
                } else if state.withLock({ $0.stopping }) {
                    return
                }
            }
        }
    }
}
