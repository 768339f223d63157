import Dispatch
import Synchronization

/// Work handed to one background thread that takes it in batches: each turn, everything queued since the last
/// one (up to `maxBatch`), so the cost of a turn (a commit, a round trip) is shared by all it carries.
public final class BatchQueue<Item: Sendable>: Sendable {
    private struct Queue {
        var items: [Item] = []
        var stopping = false
    }

    private let maxBatch: Int
    private let process: @Sendable ([Item]) -> Void
    private let queue = Mutex(Queue())
    private let available = DispatchSemaphore(value: 0)
    /// Set once in `init`, after every other property (the thread's body needs `self`).
    private let thread = Mutex<BackgroundThread?>(nil)

    /// Starts the thread `name`, which calls `process` with batches of at most `maxBatch` items in queue order.
    public init(name: String, maxBatch: Int, process: @escaping @Sendable ([Item]) -> Void) {
        self.maxBatch = max(1, maxBatch)
        self.process = process
        let thread = BackgroundThread(name: name) { [self] in run() }
        self.thread.withLock { $0 = thread }
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

    /// Processes what is queued, then stops the thread. A second call returns at once.
    public func stop() {
        let first = queue.withLock { queue in
            defer { queue.stopping = true }
            return !queue.stopping
        }
        guard first else { return }
        available.signal()
        thread.withLock { $0 }?.join()
    }

    private func run() {
        while true {
            available.wait()
            let (batch, stopping) = queue.withLock { queue in
                let batch = Array(queue.items.prefix(maxBatch))
                queue.items.removeFirst(batch.count)
                return (batch, queue.stopping && queue.items.isEmpty)
            }
            if !batch.isEmpty {
                process(batch)
                if queue.withLock({ !$0.items.isEmpty }) { available.signal() }
            }
            if stopping { return }
        }
    }
}
