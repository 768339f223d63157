import Dispatch
import Synchronization
import Testing

@testable import HTTPServer

@Suite("WorkerPool")
struct WorkerPoolTests {
    final class Payload: Sendable {}

    final class WeakBox: Sendable {
        weak let payload: Payload?
        let releasedWhenChecked = Atomic<Bool>(false)
        init(_ payload: Payload) { self.payload = payload }
    }

    /// A job is let go once it has run: a job holds its request, body included, and the queue kept run jobs (and
    /// their bodies) until it next compacted, a thousand jobs later.
    @Test func aJobIsLetGoOnceItHasRun() {
        let pool = WorkerPool(threads: 1)
        defer { pool.stop() }
        let ran = DispatchSemaphore(value: 0)
        let box: WeakBox
        do {
            let payload = Payload()
            box = WeakBox(payload)
            pool.submit {
                _ = payload
                ran.signal()
            }
        }
        // The one thread takes jobs in order: when the second runs, the first has returned and been let go.
        let checked = DispatchSemaphore(value: 0)
        pool.submit {
            box.releasedWhenChecked.store(box.payload == nil, ordering: .relaxed)
            checked.signal()
        }
        #expect(ran.wait(timeout: .now() + 10) == .success)
        #expect(checked.wait(timeout: .now() + 10) == .success)
        let released = box.releasedWhenChecked.load(ordering: .relaxed)
        #expect(released)
    }
}
