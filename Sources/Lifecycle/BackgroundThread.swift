import Dispatch
import Foundation
import Synchronization

/// A named thread that runs one loop and can be waited for. The server's long-lived workers (event loops, the
/// journal, the ingester, reporting) block in system calls, so they run on threads of their own, never in Swift
/// concurrency's cooperative pool (two blocked tasks would stall the whole process on a 2-core machine).
public final class BackgroundThread: Sendable {
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `body` on a new thread named `name` at once.
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        // The body is handed over and released before `join` returns: Foundation's `Thread` keeps its block
        // until the thread object goes, some time after the thread ends, and whatever the body holds (a
        // database connection and its locks) would outlive `join` by a race.
        let handover = Mutex<(@Sendable () -> Void)?>(body)
        let thread = Thread { [finished] in
            ThreadName.setForCurrentThread(name)
            do {
                let body = handover.withLock { $0.take() }
                body?()
            }
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Blocks until the body has returned. Call at most once.
    public func join() {
        finished.wait()
    }
}
