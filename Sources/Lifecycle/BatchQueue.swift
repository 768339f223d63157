import Dispatch
import Synchronization

/// Work handed to background threads that take it in batches: each turn, everything queued since the last one
/// (up to `maxBatch`), so the cost of a turn (a commit, a round trip) is shared by all it carries. With more than
/// one thread, a batch is taken while others are still being processed: turns overlap, and batches may finish
/// out of queue order.
public final class BatchQueue<Item: Sendable>: Sendable {
    private struct Queue {
        var items: [Item] = []
        var stopping = false
    }

    private let maxBatch: Int
    private let process: @Sendable (_ lane: Int, [Item]) -> Void
    private let queue = Mutex(Queue())
    private let available = DispatchSemaphore(value: 0)
    /// Set once in `init`, after every other property (the threads' bodies need `self`).
    private let threads = Mutex<[BackgroundThread]>([])

    /// Starts the thread `name`, which calls `process` with batches of at most `maxBatch` items in queue order.
    public convenience init(name: String, maxBatch: Int, process: @escaping @Sendable ([Item]) -> Void) {
        self.init(name: name, maxBatch: maxBatch, threads: 1) { _, batch in process(batch) }
    }

    /// Starts `threads` threads named `name`, each calling `process` with its lane (0 up to `threads` - 1, a
    /// thread's own) and batches of at most `maxBatch` items taken in queue order.
    public init(
        name: String,
        maxBatch: Int,
        threads count: Int,
        process: @escaping @Sendable (_ lane: Int, [Item]) -> Void
    ) {
        self.maxBatch = max(1, maxBatch)
        self.process = process
        let started = (0..<max(1, count)).map { lane in BackgroundThread(name: name) { [self] in run(lane: lane) } }
        threads.withLock { $0 = started }
    }

    /// Queues `item` for the next batch; false (and not queued) once stopping.
    public func submit(_ item: Item) -> Bool {
        let accepted = queue.withLock { queue in
            guard !queue.stopping else { return false }
            queue.items.append(item)
            return true
        }
        if accepted { available.signal() }
        return accepted
    }

    /// Processes what is queued, then stops the threads. A second call returns at once.
    public func stop() {
        let first = queue.withLock { queue in
            defer { queue.stopping = true }
            return !queue.stopping
        }
        guard first else { return }
        let threads = threads.withLock { $0 }
        // One wake-up per thread: a thread that finds the queue empty and stopping returns without taking more.
        for _ in threads { available.signal() }
        for thread in threads { thread.join() }
    }

    private func run(lane: Int) {
        while true {
            available.wait()
            let (batch, stopping) = queue.withLock { queue in
                let batch = Array(queue.items.prefix(maxBatch))
                queue.items.removeFirst(batch.count)
                return (batch, queue.stopping && queue.items.isEmpty)
            }
            if !batch.isEmpty {
                process(lane, batch)
                if queue.withLock({ !$0.items.isEmpty }) { available.signal() }
            }
            if stopping {
                // Another thread may have left its wake-up for this one while the last batch was processed.
                available.signal()
                return
            }
        }
    }
}
