import Dispatch
import Foundation
import Synchronization

/// A fixed set of threads that run blocking work (SQLite, libcurl, disk) off the event loops.
///
/// Jobs queue without bound in memory; the number of jobs is bounded by the connection cap, because each
/// connection has at most one request in a handler at a time.
final class WorkerPool: Sendable {
    typealias Job = @Sendable () -> Void

    private struct State {
        var jobs: [Job] = []
        var head = 0
        var stopping = false
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let finished = DispatchGroup()
    private let threadCount: Int

    init(threads: Int, stackSize: Int = 512 * 1024) {
        threadCount = max(1, threads)
        for index in 0..<threadCount {
            finished.enter()
            let thread = Thread { [self] in
                self.run()
                self.finished.leave()
            }
            thread.name = "linkout-worker-\(index)"
            thread.stackSize = stackSize
            thread.start()
        }
    }

    func submit(_ job: @escaping Job) {
        state.withLock { $0.jobs.append(job) }
        available.signal()
    }

    /// Lets queued jobs finish, then ends every thread and waits for them.
    func stop() {
        state.withLock { $0.stopping = true }
        for _ in 0..<threadCount { available.signal() }
        finished.wait()
    }

    private func run() {
        while true {
            available.wait()
            let job: Job? = state.withLock { state in
                guard state.head < state.jobs.count else { return nil }
                let job = state.jobs[state.head]
                state.head += 1
                if state.head > 1024 && state.head * 2 > state.jobs.count {
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
