import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Logging
import Storage
import Testing

@testable import LinkOut

/// A clock stepped back after a retry was planned: the retry's time lies a day ahead of the corrected clock. Any
/// wait is an hour at most, so the next pass brings such a report forward (`Ledger.bringForwardAfterClockStep`),
/// where it waited out the step (a day, with Apple's 10-day notice running).
@Suite struct ClockSteppedBackTests {
    @Test func aRetryPlannedByAClockThatRanAheadIsDueOnceItIsCorrected() throws {
        let ahead = ManualClock(startingAt: Clock.system.nowMilliseconds() + 86_400_000)
        let harness = try ReportingHarness(clock: ahead.clock)
        try harness.record("stepped-back", created: Clock.system.nowMilliseconds() - 60_000)
        harness.production.enqueue(.respond(status: 500))
        harness.service.tick()
        let planned = try #require(try harness.reports("stepped-back").first)
        #expect(planned.state == .pending && planned.nextAttemptAt > Clock.system.nowMilliseconds() + 80_000_000)

        // The same ledger, served on the corrected clock.
        let corrected = ReportingService(
            configuration: harness.configuration,
            ledger: harness.ledger,
            logger: Logger(label: "test", level: .critical),
            clock: .system
        )
        corrected.tick()
        #expect(try harness.reports("stepped-back").first?.state == .accepted)
        #expect(harness.production.received.count == 2)
    }
}
