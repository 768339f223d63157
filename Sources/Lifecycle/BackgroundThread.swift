import Dispatch
import Foundation

/// A named thread that runs one loop and can be waited for. The server's long-lived workers (event loops, the
/// journal, the ingester, reporting) block in system calls, so they run on threads of their own, never in Swift
/// concurrency's cooperative pool (two blocked tasks would stall the whole process on a 2-core machine).
public final class BackgroundThread: Sendable {
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `body` on a new thread named `name` at once.
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [finished] in
            body()
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
