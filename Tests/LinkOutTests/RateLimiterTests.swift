import Lifecycle
import Testing

@testable import LinkOut

/// The per-client token bucket refills by the injected clock: a client over its budget is let in again once the
/// clock has moved, with no wait in real time.
@Suite("Rate limiter")
struct RateLimiterTests {
    @Test func aClientOverItsBurstWaitsUntilTheClockRefillsItsBucket() {
        let time = ManualClock(startingAt: 0)
        let limiter = RateLimiter(perSecond: 2, burst: 3, clock: time.clock)
        #expect((0..<3).map { _ in limiter.delay(for: "a") } == [nil, nil, nil])
        #expect(limiter.delay(for: "a") == 1)
        #expect(limiter.delay(for: "b") == nil)  // another client has its own bucket
        time.advance(by: 499)
        #expect(limiter.delay(for: "a") != nil)
        time.advance(by: 1)
        #expect(limiter.delay(for: "a") == nil)
        #expect(limiter.delay(for: "a") != nil)
        time.advance(by: 60_000)  // a full bucket holds the burst, no more
        #expect((0..<3).map { _ in limiter.delay(for: "a") } == [nil, nil, nil])
        #expect(limiter.delay(for: "a") != nil)
    }

    /// A client that spent tokens long ago has a full bucket by now: forgotten when the table is pruned (it was
    /// kept for good, and past the limit every request copied the whole table). Clients active at once beyond
    /// the limit keep the table bounded too, the least recently seen going first.
    @Test func theTableForgetsQuietClientsAndStaysBounded() {
        let time = ManualClock(startingAt: 0)
        let limiter = RateLimiter(perSecond: 2, burst: 3, clock: time.clock, maxClients: 100)
        for index in 0..<100 {
            #expect(limiter.delay(for: "old-\(index)") == nil)
            #expect(limiter.delay(for: "old-\(index)") == nil)
        }
        #expect(limiter.trackedClients == 100)
        time.advance(seconds: 60)
        #expect(limiter.delay(for: "new") == nil)
        #expect(limiter.trackedClients == 1, "the quiet clients are forgotten")
        for index in 0..<1_000 {
            _ = limiter.delay(for: "busy-\(index)")
            _ = limiter.delay(for: "busy-\(index)")
        }
        #expect(limiter.trackedClients <= 100)
        // The half of the limit seen last are still limited as they were (one token left each), however the
        // clock ties: here it never moves.
        for index in 950..<1_000 {
            let client = "busy-\(index)"
            #expect(limiter.delay(for: client) == nil && limiter.delay(for: client) != nil, "\(client)")
        }
    }

    @Test func noLimitLetsEverythingThrough() {
        let limiter = RateLimiter(perSecond: 0, burst: 0, clock: .fixed(0))
        #expect((0..<100).allSatisfy { _ in limiter.delay(for: "a") == nil })
    }
}
