import Testing

@testable import HTTPServer

/// The heap is trimmed only when it holds enough free memory, at most once per interval however many loops ask,
/// and only after an interval in which no loop was busy.
@Suite("HeapTrimmer")
struct HeapTrimmerTests {
    @Test func trimsAtMostOncePerIntervalAndOnlyAboveTheThreshold() {
        let second: UInt64 = 1_000_000_000
        let always = HeapTrimmer(threshold: 0, interval: second)
        #expect(always.trimIfDue(now: 10 * second))
        #expect(!always.trimIfDue(now: 10 * second + second / 2))
        #expect(always.trimIfDue(now: 11 * second))

        // A loop's busy sweep holds every check back for an interval (measuring the heap stalls every thread).
        let busy = HeapTrimmer(threshold: 0, interval: second)
        busy.noteSweep(events: 1_000, elapsed: second / 4, now: 20 * second)
        #expect(!busy.trimIfDue(now: 20 * second + second / 2))
        busy.noteSweep(events: 10, elapsed: second / 4, now: 21 * second)
        #expect(busy.trimIfDue(now: 21 * second))

        let never = HeapTrimmer(threshold: .max, interval: second)
        #expect(!never.trimIfDue(now: 10 * second))
        #expect(!never.trimIfDue(now: 12 * second))
    }

    /// A loop's first sweep on a host up for years: the time since the last sweep is the whole monotonic clock
    /// (about 2.3 years and more overflowed the rate's product and stopped the server at its first sweep).
    @Test func aSweepAfterYearsOfMonotonicTimeIsQuiet() {
        let second: UInt64 = 1_000_000_000
        let uptime = 3 * 365 * 86_400 * second
        let trimmer = HeapTrimmer(threshold: 0, interval: second)
        trimmer.noteSweep(events: 5, elapsed: uptime, now: uptime)
        #expect(trimmer.trimIfDue(now: uptime))
        trimmer.noteSweep(events: .max, elapsed: second, now: uptime + 2 * second)
        #expect(!trimmer.trimIfDue(now: uptime + 2 * second), "so many events is busy")
    }
}
