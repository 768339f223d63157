import CSystem
import Synchronization

/// Hands heap memory that a burst freed back to the kernel. Freed heap is kept for reuse on purpose
/// (`csystem_keep_freed_heap`: giving it back after every burst and faulting it in again cost the ledger writer
/// 14% of its time), but after a burst of request bodies from many clients that kept hundreds of megabytes resident
/// for good. So at most once per `interval` one event loop looks at how much the heap holds free and trims it when
/// that passes `threshold`; steady traffic, whose free heap stays below it, keeps its memory.
final class HeapTrimmer: Sendable {
    let threshold: Int
    let interval: UInt64
    private let nextCheck = Atomic<UInt64>(0)

    init(threshold: Int = 16 << 20, interval: UInt64 = 1_000_000_000) {
        self.threshold = threshold
        self.interval = interval
    }

    /// Called from every loop's sweep; costs one atomic load unless a check is due. True when it trimmed.
    @discardableResult
    func trimIfDue(now: UInt64) -> Bool {
        let due = nextCheck.load(ordering: .relaxed)
        guard now >= due,
            nextCheck.compareExchange(expected: due, desired: now + interval, ordering: .relaxed).exchanged
        else { return false }
        guard csystem_heap_free_bytes() >= threshold else { return false }
        csystem_trim_heap()
        return true
    }
}
