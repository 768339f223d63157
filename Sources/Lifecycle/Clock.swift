import Dispatch
import Foundation

/// Where time comes from. Code that decides by time (reporting deadlines and backoff, token dates, sessions, rate
/// limits, code expiry, leases, how long a background thread waits before its next pass) takes a clock, so tests
/// move time instead of sleeping: `ManualClock` moves only when told, and wakes the threads waiting on it.
public struct Clock: Sendable {
    private let milliseconds: @Sendable () -> Int64
    private let uptime: @Sendable () -> UInt64
    private let waiter: @Sendable (_ deadline: Int64, _ wakeUp: DispatchSemaphore) -> Void

    /// A clock that reads `milliseconds`, measures spans with it too, and waits in real time (a wait ends when
    /// its span has passed on the system's monotonic clock).
    public init(milliseconds: @escaping @Sendable () -> Int64) {
        self.init(
            milliseconds: milliseconds,
            uptimeNanoseconds: { UInt64(max(0, milliseconds())) &* 1_000_000 },
            wait: { deadline, wakeUp in Self.waitInRealTime(for: deadline - milliseconds(), on: wakeUp) }
        )
    }

    /// A clock whose wall-clock time and monotonic spans are read apart (a test of a wall clock stepped back
    /// while spans go on); its waits last their span in real time.
    public init(milliseconds: @escaping @Sendable () -> Int64, uptimeNanoseconds: @escaping @Sendable () -> UInt64) {
        self.init(
            milliseconds: milliseconds,
            uptimeNanoseconds: uptimeNanoseconds,
            wait: { deadline, wakeUp in Self.waitInRealTime(for: deadline - milliseconds(), on: wakeUp) }
        )
    }

    init(
        milliseconds: @escaping @Sendable () -> Int64,
        uptimeNanoseconds: @escaping @Sendable () -> UInt64,
        wait: @escaping @Sendable (_ deadline: Int64, _ wakeUp: DispatchSemaphore) -> Void
    ) {
        self.milliseconds = milliseconds
        self.uptime = uptimeNanoseconds
        self.waiter = wait
    }

    /// Wall-clock time as Apple counts it in tokens and reports: milliseconds since 1970.
    public func nowMilliseconds() -> Int64 { milliseconds() }

    /// Whole seconds since 1970.
    public func nowSeconds() -> Int64 { milliseconds() / 1000 }

    /// A monotonic reading in nanoseconds, for spans (rate-limit buckets, how long a call has been out): it never
    /// goes back when the wall clock is set.
    public func uptimeNanoseconds() -> UInt64 { uptime() }

    /// Blocks until `wakeUp` is signalled or this clock reads `deadline` (UNIX ms) or later. Prefer `WakeUp`,
    /// which pairs a signal with its clock.
    func wait(until deadline: Int64, on wakeUp: DispatchSemaphore) {
        waiter(deadline, wakeUp)
    }

    /// The system's wall clock; spans on its monotonic clock.
    public static let system = Clock(
        milliseconds: { Int64((Date().timeIntervalSince1970 * 1000).rounded()) },
        uptimeNanoseconds: { DispatchTime.now().uptimeNanoseconds },
        wait: { deadline, wakeUp in
            waitInRealTime(for: deadline - Int64((Date().timeIntervalSince1970 * 1000).rounded()), on: wakeUp)
        }
    )

    /// A clock that always answers `milliseconds` (tests); its waits last their span in real time.
    public static func fixed(_ milliseconds: Int64) -> Clock { Clock { milliseconds } }

    /// A wait of `milliseconds` on the system's monotonic clock (a day at most per call: the caller's loop looks
    /// again), ended early by a signal.
    private static func waitInRealTime(for milliseconds: Int64, on wakeUp: DispatchSemaphore) {
        let span = min(max(0, milliseconds), 86_400_000)
        _ = wakeUp.wait(timeout: .now() + .milliseconds(Int(span)))
    }
}
