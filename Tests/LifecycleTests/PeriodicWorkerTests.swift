import Dispatch
import Synchronization
import TestSupport
import Testing

@testable import Lifecycle

/// The background loop of every durable queue, driven by a manual clock: passes come when the clock says or when
/// woken, never by waiting in real time.
@Suite("Periodic worker")
struct PeriodicWorkerTests {
    /// Counts passes and lets the test wait (bounded) for the next one.
    final class Passes: Sendable {
        let count = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)

        func run() {
            count.add(1, ordering: .relaxed)
            done.signal()
        }

        func next() -> Bool { done.wait(timeout: .now() + 10) == .success }
    }

    @Test func aPassRunsAtStartThenWhenTheIntervalHasPassedOnTheClock() {
        let time = ManualClock(startingAt: 0)
        let worker = PeriodicWorker(clock: time.clock)
        defer { worker.stop() }
        let passes = Passes()
        worker.start(name: "test-worker", intervalMilliseconds: 60_000) { passes.run() }
        #expect(passes.next())
        #expect(ClockTests.parked(time, count: 1))
        time.advance(by: 59_999)
        #expect(time.waiting == 1)
        #expect(passes.count.load(ordering: .relaxed) == 1)
        time.advance(by: 1)
        #expect(passes.next())
        #expect(passes.count.load(ordering: .relaxed) == 2)
    }

    /// The interval counts from the start of a pass: a test that moves time while a pass runs (or before the
    /// worker parks) still gets the next pass.
    @Test func anAdvanceBeforeTheWorkerParksIsNotLost() {
        let time = ManualClock(startingAt: 0)
        let worker = PeriodicWorker(clock: time.clock)
        defer { worker.stop() }
        let release = DispatchSemaphore(value: 0)
        let passes = Passes()
        worker.start(name: "test-worker", intervalMilliseconds: 1_000) {
            passes.run()
            if passes.count.load(ordering: .relaxed) == 1 { release.wait() }
        }
        #expect(passes.next())
        time.advance(by: 1_000)  // during the first pass
        release.signal()
        #expect(passes.next())
    }

    @Test func aWakeUpRunsAPassWithoutMovingTime() {
        let time = ManualClock(startingAt: 0)
        let worker = PeriodicWorker(clock: time.clock)
        defer { worker.stop() }
        let passes = Passes()
        worker.start(name: "test-worker", intervalMilliseconds: 3_600_000) { passes.run() }
        #expect(passes.next())
        worker.wake()
        #expect(passes.next())
        #expect(time.now == 0)
    }

    /// A pass that knows its next work (a retry's backoff) runs again then, before the interval.
    @Test func aPassCanAskForTheNextSooner() {
        let time = ManualClock(startingAt: 0)
        let worker = PeriodicWorker(clock: time.clock)
        defer { worker.stop() }
        let passes = Passes()
        worker.startScheduling(name: "test-worker", intervalMilliseconds: 3_600_000) {
            passes.run()
            return 5_000
        }
        #expect(passes.next())
        #expect(ClockTests.parked(time, count: 1))
        time.advance(by: 4_999)
        #expect(time.waiting == 1)
        time.advance(by: 1)
        #expect(passes.next())
    }

    /// A wall clock set back during a pass (an NTP step) does not stretch the wait past one interval. The clock
    /// here reads a value the test sets and waits in real time, as the system clock does.
    @Test func aWallClockSetBackDoesNotStretchTheWait() {
        let now = Atomic<Int64>(1_700_000_000_000)
        let worker = PeriodicWorker(clock: Clock { now.load(ordering: .relaxed) })
        defer { worker.stop() }
        let passes = Passes()
        worker.start(name: "test-worker", intervalMilliseconds: 20) {
            passes.run()
            if passes.count.load(ordering: .relaxed) == 1 { now.subtract(3_600_000, ordering: .relaxed) }
        }
        #expect(passes.next())
        #expect(passes.next())
    }

    @Test func stopWaitsForThePassInFlightAndEndsTheLoop() {
        let time = ManualClock(startingAt: 0)
        let worker = PeriodicWorker(clock: time.clock)
        let inPass = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = Atomic<Bool>(false)
        worker.start(name: "test-worker", intervalMilliseconds: 1_000) {
            guard !finished.load(ordering: .relaxed) else { return }
            inPass.signal()
            release.wait()
            finished.store(true, ordering: .relaxed)
        }
        #expect(inPass.wait(timeout: .now() + 10) == .success)
        #expect(!worker.isStopping)
        let stopped = BackgroundThread(name: "test-stop") { worker.stop() }
        #expect(eventually(within: 30) { worker.isStopping })
        release.signal()
        stopped.join()
        let finishedPass = finished.load(ordering: .relaxed)
        #expect(finishedPass)
        worker.stop()  // a second stop returns at once
    }
}
