import Synchronization

/// A background thread that runs a pass every interval, or at once when woken, until stopped. The services
/// that act on durable queues (reporting, payment events, entitlement webhooks, notifications) run this way: a
/// pass never overlaps the next, a wake-up during a pass runs one more, and `stop` waits for the pass in flight.
/// The interval is counted on the worker's clock from the start of a pass, so a test with a `ManualClock` runs
/// the next pass by advancing the clock, however long the pass itself took.
public final class PeriodicWorker: Sendable {
    public let clock: Clock
    private let wakeUp: WakeUp
    private let stopping = Atomic<Bool>(false)
    private let thread = Mutex<BackgroundThread?>(nil)

    public init(clock: Clock = .system) {
        self.clock = clock
        wakeUp = WakeUp(clock: clock)
    }

    /// Starts the thread; `pass` runs at once, then `intervalMilliseconds` after each pass began, or at a wake-up.
    /// Call at most once.
    public func start(name: String, intervalMilliseconds: Int64, _ pass: @escaping @Sendable () -> Void) {
        startScheduling(name: name, intervalMilliseconds: intervalMilliseconds) {
            pass()
            return nil
        }
    }

    /// Like `start(name:intervalMilliseconds:_:)` for a pass that knows when it has work again: it returns that
    /// moment (UNIX ms on the worker's clock), and the next pass runs then if that is sooner than the interval.
    public func startScheduling(
        name: String,
        intervalMilliseconds: Int64,
        _ pass: @escaping @Sendable () -> Int64?
    ) {
        let loop = BackgroundThread(name: name) { [self] in
            while !stopping.load(ordering: .relaxed) {
                let began = clock.nowMilliseconds()
                let dueAgain = pass()
                // Never more than an interval from now either: a wall clock set back during the pass must not
                // stretch the wait.
                let interval = min(began, clock.nowMilliseconds()) + max(1, intervalMilliseconds)
                wakeUp.wait(until: min(interval, dueAgain ?? interval))
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
