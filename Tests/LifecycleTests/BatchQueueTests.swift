import Dispatch
import Synchronization
import Testing

@testable import Lifecycle

@Suite("Batch queue and background thread")
struct BatchQueueTests {
    @Test func itemsArriveInOrderInBatchesOfAtMostTheLimit() {
        let batches = Mutex<[[Int]]>([])
        let gate = DispatchSemaphore(value: 0)
        let queue = BatchQueue<Int>(name: "test-batches", maxBatch: 3) { batch in
            // The first batch waits, so the rest queue up behind it and go in full batches.
            if batches.withLock({ $0.isEmpty }) { gate.wait() }
            batches.withLock { $0.append(batch) }
        }
        for item in 0..<8 { #expect(queue.submit(item)) }
        gate.signal()
        queue.stop()
        let seen = batches.withLock { $0 }
        #expect(seen.flatMap { $0 } == Array(0..<8))
        #expect(seen.allSatisfy { !$0.isEmpty && $0.count <= 3 })
    }

    @Test func stopProcessesWhatIsQueuedAndRefusesMore() {
        let processed = Atomic<Int>(0)
        let queue = BatchQueue<Int>(name: "test-batches", maxBatch: 100) { batch in
            processed.add(batch.count, ordering: .relaxed)
        }
        for item in 0..<50 { _ = queue.submit(item) }
        queue.stop()
        #expect(processed.load(ordering: .relaxed) == 50)
        #expect(!queue.submit(51))
        queue.stop()  // a second stop returns at once
    }

    @Test func joinReturnsOnceTheBodyHasReturned() {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = Atomic<Bool>(false)
        let thread = BackgroundThread(name: "test-joined") {
            started.signal()
            release.wait()
            done.store(true, ordering: .relaxed)
        }
        #expect(started.wait(timeout: .now() + 10) == .success)
        let early = done.load(ordering: .relaxed)
        #expect(!early)
        release.signal()
        thread.join()
        let late = done.load(ordering: .relaxed)
        #expect(late)
    }
}
