import Dispatch
import TestSupport
import Testing

@testable import Lifecycle

@Suite("Clock")
struct ClockTests {
    @Test func aManualClockMovesOnlyWhenTold() {
        let time = ManualClock(startingAt: 1_700_000_000_000)
        let clock = time.clock
        #expect(clock.nowMilliseconds() == 1_700_000_000_000)
        #expect(clock.nowSeconds() == 1_700_000_000)
        let uptime = clock.uptimeNanoseconds()
        #expect(clock.nowMilliseconds() == 1_700_000_000_000)
        time.advance(by: 1_500)
        #expect(clock.nowMilliseconds() == 1_700_000_001_500)
        #expect(clock.uptimeNanoseconds() - uptime == 1_500_000_000)
        time.advance(seconds: 2)
        #expect(time.now == 1_700_000_003_500)
    }

    /// A thread parked on the clock wakes when an advance reaches its deadline, and not before.
    @Test func anAdvanceWakesTheWaitsItReaches() {
        let time = ManualClock(startingAt: 0)
        let wakeUp = WakeUp(clock: time.clock)
        let woke = DispatchSemaphore(value: 0)
        let thread = BackgroundThread(name: "test-waiter") {
            wakeUp.wait(until: 1_000)
            woke.signal()
        }
        #expect(Self.parked(time, count: 1))
        time.advance(by: 999)
        #expect(time.waiting == 1)
        time.advance(by: 1)
        #expect(woke.wait(timeout: .now() + 10) == .success)
        thread.join()
        #expect(time.waiting == 0)
    }

    @Test func aSignalEndsAWaitOnAManualClock() {
        let time = ManualClock(startingAt: 0)
        let wakeUp = WakeUp(clock: time.clock)
        let thread = BackgroundThread(name: "test-waiter") { wakeUp.wait(until: 86_400_000) }
        #expect(Self.parked(time, count: 1))
        wakeUp.signal()
        thread.join()
        #expect(time.waiting == 0)
        #expect(time.now == 0)
    }

    @Test func aWaitForAMomentPastReturnsAtOnce() {
        let time = ManualClock(startingAt: 5_000)
        WakeUp(clock: time.clock).wait(until: 5_000)
        WakeUp(clock: time.clock).wait(until: 0)
        #expect(time.waiting == 0)
    }

    /// The system clock's waits end by a signal, or when their span has passed in real time.
    @Test func theSystemClockWaitsInRealTime() {
        let wakeUp = WakeUp(clock: .system)
        let start = DispatchTime.now().uptimeNanoseconds
        wakeUp.wait(until: Clock.system.nowMilliseconds() + 30)
        #expect(DispatchTime.now().uptimeNanoseconds - start >= 20_000_000)
        wakeUp.signal()
        let signalled = DispatchTime.now().uptimeNanoseconds
        wakeUp.wait(until: Clock.system.nowMilliseconds() + 60_000)
        #expect(DispatchTime.now().uptimeNanoseconds - signalled < 30_000_000_000)
    }

    @Test func aFixedClockAnswersOneMoment() {
        let clock = Clock.fixed(1_234_567)
        #expect(clock.nowMilliseconds() == 1_234_567)
        #expect(clock.nowSeconds() == 1_234)
        #expect(clock.uptimeNanoseconds() == 1_234_567_000_000)
    }

    /// Whether `count` threads are parked on the clock within 10 s: a test moves time only once the thread it
    /// means to wake is waiting, so what it checks after an advance does not depend on thread timing.
    static func parked(_ time: ManualClock, count: Int) -> Bool {
        eventually(within: 30) { time.waiting >= count }
    }
}
