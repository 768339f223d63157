import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A named thread that runs one loop and can be waited for. The server's long-lived workers (event loops, the
/// journal, the ingester, reporting) block in system calls, so they run on threads of their own, never in Swift
/// concurrency's cooperative pool (two blocked tasks would stall the whole process on a 2-core machine).
///
/// Made with `pthread_create` itself, whose failure is seen: Foundation's `Thread` starts nothing when the system
/// refuses a thread (`EAGAIN`, under an address-space or thread limit), and a `join` then waited for good (a server
/// that said it listened but had no event loop, and never ended on SIGTERM).
public final class BackgroundThread: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    /// False when the system refused the thread: its body never runs, and `join` returns at once.
    public let started: Bool

    /// Until `carryOnAfterRefusals` is called, a refused thread ends the process (exit 1): a process short of a
    /// thread it starts with cannot work, and what waited for that thread (a `join`, a queue's answer) waited for
    /// good. A server that is serving calls it: a later refusal (an outbox pass's sender) costs that thread only.
    private static let refusalEndsProcess = Atomic<Bool>(true)

    /// From now on a refused thread is said on standard error and its body skipped; the process goes on.
    public static func carryOnAfterRefusals() {
        refusalEndsProcess.store(false, ordering: .relaxed)
    }

    /// What a new thread runs: its name, then the body, which is handed over and released before `join` returns
    /// (whatever the body holds, a database connection and its locks, must not outlive `join`).
    private final class Start: Sendable {
        let name: String
        let body: Mutex<(@Sendable () -> Void)?>
        let finished: DispatchSemaphore

        init(name: String, body: @escaping @Sendable () -> Void, finished: DispatchSemaphore) {
            self.name = name
            self.body = Mutex(body)
            self.finished = finished
        }

        func run() {
            ThreadName.setForCurrentThread(name)
            do {
                let body = self.body.withLock { $0.take() }
                body?()
            }
            finished.signal()
        }
    }

    /// Starts `body` on a new thread named `name` at once. When the system refuses the thread, says so on
    /// standard error and runs nothing, or ends the process (`carryOnAfterRefusals`).
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(name: name, body: body, finished: finished))
        var thread = pthread_t()
        let result = pthread_create(
            &thread,
            nil,
            { context in
                guard let context else { return nil }
                Unmanaged<Start>.fromOpaque(context).takeRetainedValue().run()
                return nil
            },
            start.toOpaque()
        )
        started = result == 0
        // Waited for through `finished`, never joined: its resources go back when it ends.
        guard !started else {
            pthread_detach(thread)
            return
        }
        start.release()
        let ends = Self.refusalEndsProcess.load(ordering: .relaxed)
        let message =
            "linkout: the system refused a thread for \(name) (error \(result): a limit on address space or "
            + "threads)" + (ends ? "; stopping (exit 1)\n" : "\n")
        _ = message.utf8CString.withUnsafeBufferPointer { write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
        // At once, without exit handlers: other threads may hold locks those would wait for. Nothing is lost:
        // an acknowledged visit is in the journal already, and SQLite's WAL is replayed at the next open.
        if ends { _exit(1) }
        finished.signal()
    }

    /// Blocks until the body has returned (at once for a thread that never started). Call at most once.
    public func join() {
        finished.wait()
    }
}
