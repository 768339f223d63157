public import Dispatch
import Synchronization

/// A background thread that runs a pass every `interval`, or at once when woken, until stopped. The services
/// that act on durable queues (reporting, payment events, entitlement webhooks, notifications) run this way: a
/// pass never overlaps the next, a wake-up during a pass runs one more, and `stop` waits for the pass in flight.
public final class PeriodicWorker: Sendable {
    private let wakeUp = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private let thread = Mutex<BackgroundThread?>(nil)

    public init() {}

    /// Starts the thread; `pass` runs at once, then after each interval or wake-up. Call at most once.
    public func start(name: String, interval: DispatchTimeInterval, _ pass: @escaping @Sendable () -> Void) {
        let loop = BackgroundThread(name: name) { [self] in
            while !stopping.load(ordering: .relaxed) {
                pass()
                _ = wakeUp.wait(timeout: .now() + interval)
            }
        }
        thread.withLock { $0 = loop }
    }

    /// Runs a pass soon (new work arrived) instead of waiting out the interval.
    public func wake() { wakeUp.signal() }

    /// Whether `stop` was called: long passes check it between items.
    public var isStopping: Bool { stopping.load(ordering: .relaxed) }

    /// Stops after the pass in flight and waits for it. Safe to call more than once, or without `start`.
    public func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        wakeUp.signal()
        thread.withLock { $0 }?.join()
    }
}
