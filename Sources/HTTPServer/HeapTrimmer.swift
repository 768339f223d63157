import CSystem
import Synchronization

/// Hands heap memory that a burst freed back to the kernel. Freed heap is kept for reuse on purpose
/// (`csystem_keep_freed_heap`: giving it back after every burst and faulting it in again cost the ledger writer
/// 14% of its time), but after a burst of request bodies from many clients that kept hundreds of megabytes resident
/// for good. So at most once per `interval`, and only once the whole server has been quiet for that long, one event
/// loop looks at how much the heap holds free and trims it when that passes `threshold`: measuring it
/// (`mallinfo2`) walks every arena under its lock, 2-12 ms with the ingester's backlog in memory, a stall of the
/// loop that asks and of every thread allocating meanwhile. Steady traffic, whose free heap stays below the
/// threshold, keeps its memory; the memory a burst left is given back once it is over.
final class HeapTrimmer: Sendable {
    let threshold: Int
    let interval: UInt64
    private let nextCheck = Atomic<UInt64>(0)
    /// When a loop's sweep last saw more than `quietEventsPerSecond` (monotonic ns; 0: never).
    private let lastBusy = Atomic<UInt64>(0)
    /// At most this many events a second on a loop count as quiet.
    static let quietEventsPerSecond: UInt64 = 256

    init(threshold: Int = 16 << 20, interval: UInt64 = 1_000_000_000) {
        self.threshold = threshold
        self.interval = interval
    }

    /// A loop's sweep: it took `events` in the `elapsed` nanoseconds since its last one.
    func noteSweep(events: Int, elapsed: UInt64, now: UInt64) {
        // Compared without dividing. Either product may overflow: so many events is busy, so long a time (the
        // first sweep of a loop on a host up for years: elapsed is then the whole monotonic time) is quiet.
        let (seen, tooMany) = UInt64(max(events, 0)).multipliedReportingOverflow(by: 1_000_000_000)
        let (allowed, tooLong) = Self.quietEventsPerSecond.multipliedReportingOverflow(by: max(elapsed, 1))
        if tooMany || (!tooLong && seen > allowed) {
            lastBusy.store(now, ordering: .relaxed)
        }
    }

    /// Called from every loop's sweep; costs two atomic loads unless a check is due. True when it trimmed.
    @discardableResult
    func trimIfDue(now: UInt64) -> Bool {
        let due = nextCheck.load(ordering: .relaxed)
        let busy = lastBusy.load(ordering: .relaxed)
        // Another loop's busy moment may be later than this `now` (taken before it): busy, not long ago.
        guard now >= due, busy == 0 || (now > busy && now - busy >= interval),
            nextCheck.compareExchange(expected: due, desired: now + interval, ordering: .relaxed).exchanged
        else { return false }
        guard csystem_heap_free_bytes() >= threshold else { return false }
        csystem_trim_heap()
        return true
    }
}
