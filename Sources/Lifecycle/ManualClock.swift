import Dispatch
import Synchronization

/// A clock that moves only when told (`advance(by:)`), for tests and simulations: backoff, expiry, leases and the
/// intervals of background threads come due when the test says, never by waiting in real time. A thread waiting
/// on it (`WakeUp.wait(until:)`) wakes when an advance reaches its deadline, or when signalled.
public final class ManualClock: Sendable {
    private struct Waiter {
        var deadline: Int64
        var wakeUp: DispatchSemaphore
    }

    private struct State {
        var now: Int64
        var uptime: UInt64 = 1_000_000_000
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private let state: Mutex<State>

    /// Starts at `milliseconds` (UNIX ms): by default the system's time now, so the dates tests make with the
    /// system clock (tokens created an hour ago) read right against it.
    public init(startingAt milliseconds: Int64 = Clock.system.nowMilliseconds()) {
        state = Mutex(State(now: milliseconds))
    }

    /// The `Clock` to inject: it reads this clock's time and waits on it.
    public var clock: Clock {
        Clock(
            milliseconds: { [self] in now },
            uptimeNanoseconds: { [self] in state.withLock { $0.uptime } },
            wait: { [self] deadline, wakeUp in wait(until: deadline, on: wakeUp) }
        )
    }

    /// The time now, UNIX ms.
    public var now: Int64 { state.withLock { $0.now } }

    /// Threads waiting on this clock now (a test can make sure a worker is parked before it moves time).
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// Moves time on by `milliseconds` (never back) and wakes every wait whose deadline it reaches.
    public func advance(by milliseconds: Int64) {
        precondition(milliseconds >= 0, "a ManualClock never goes back: start it earlier instead")
        let due = state.withLock { state -> [DispatchSemaphore] in
            state.now += milliseconds
            state.uptime += UInt64(milliseconds) * 1_000_000
            let due = state.waiters.filter { $0.value.deadline <= state.now }
            for key in due.keys { state.waiters[key] = nil }
            return due.values.map(\.wakeUp)
        }
        for wakeUp in due { wakeUp.signal() }
    }

    /// Moves time on by whole seconds.
    public func advance(seconds: Int64) {
        advance(by: seconds * 1000)
    }

    private func wait(until deadline: Int64, on wakeUp: DispatchSemaphore) {
        let key = state.withLock { state -> Int? in
            guard deadline > state.now else { return nil }
            state.nextWaiter += 1
            state.waiters[state.nextWaiter] = Waiter(deadline: deadline, wakeUp: wakeUp)
            return state.nextWaiter
        }
        guard let key else { return }
        wakeUp.wait()
        // Signalled by the test's thread rather than by an advance: the registration is still there.
        state.withLock { _ = $0.waiters.removeValue(forKey: key) }
    }
}
