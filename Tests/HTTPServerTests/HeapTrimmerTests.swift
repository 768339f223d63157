import Testing

@testable import HTTPServer

/// The heap is trimmed only when it holds enough free memory, and at most once per interval however many loops ask.
@Suite("HeapTrimmer")
struct HeapTrimmerTests {
    @Test func trimsAtMostOncePerIntervalAndOnlyAboveTheThreshold() {
        let second: UInt64 = 1_000_000_000
        let always = HeapTrimmer(threshold: 0, interval: second)
        #expect(always.trimIfDue(now: 10 * second))
        #expect(!always.trimIfDue(now: 10 * second + second / 2))
        #expect(always.trimIfDue(now: 11 * second))

        let never = HeapTrimmer(threshold: .max, interval: second)
        #expect(!never.trimIfDue(now: 10 * second))
        #expect(!never.trimIfDue(now: 12 * second))
    }
}
