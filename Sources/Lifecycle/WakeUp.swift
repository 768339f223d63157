import Dispatch

/// What a background thread waits on between passes: `signal` (new work arrived, or stop) ends the wait at once;
/// otherwise its clock ends it at the moment asked for, in that clock's time, so a `ManualClock` advanced past
/// the moment wakes the thread without anyone sleeping. A signal while nobody waits ends the next wait at once
/// (the thread then runs one more pass, which finds what there is to do).
public final class WakeUp: Sendable {
    public let clock: Clock
    private let semaphore = DispatchSemaphore(value: 0)

    public init(clock: Clock) {
        self.clock = clock
    }

    /// Ends the current wait, or the next one.
    public func signal() {
        semaphore.signal()
    }

    /// Returns when signalled or once the clock reads `deadline` (UNIX ms); at once for a moment already past.
    public func wait(until deadline: Int64) {
        clock.wait(until: deadline, on: semaphore)
    }
}
