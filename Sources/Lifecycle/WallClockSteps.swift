import Synchronization

/// Notices the wall clock stepped back (an NTP correction, an operator's `date -s`) by how it moved against the
/// monotonic clock, which never steps. Times computed before the step lie that much further ahead than meant: an
/// outbox's retry set for "in 5 s" by a clock a day ahead waited a day.
public final class WallClockSteps: Sendable {
    /// Wall-clock milliseconds minus monotonic milliseconds at the last look; nil before the first.
    private let offset = Mutex<Int64?>(nil)

    /// A step back smaller than this is the clock being slewed or read at slightly different moments.
    private static let toleranceMilliseconds: Int64 = 60_000

    public init() {}

    /// Whether the wall clock stepped back since the last look. The first look says yes: this process cannot know
    /// what its clock read before it started (a server restarted after a correction).
    public func steppedBack(_ clock: Clock) -> Bool {
        let now = clock.nowMilliseconds() - Int64(clock.uptimeNanoseconds() / 1_000_000)
        return offset.withLock { last in
            defer { last = now }
            guard let last else { return true }
            return now < last - Self.toleranceMilliseconds
        }
    }
}
