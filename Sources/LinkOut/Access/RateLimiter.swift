import Lifecycle
import Synchronization

/// A token bucket per client address: `perSecond` sustained, `burst` at once. Answers how long to wait when a
/// client is over its budget (the `Retry-After` of a 429).
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: UInt64
    }

    let perSecond: Double
    let burst: Double
    private let buckets = Mutex<[String: Bucket]>([:])
    /// Above this many tracked clients the table is pruned (`prune`): memory and the time a request holds the
    /// lock stay bounded, over months of distinct addresses or under a flood of them.
    let maxClients: Int

    /// Buckets refill by the clock's monotonic reading (a wall-clock step neither drains nor fills them).
    let clock: Clock

    init(perSecond: Double, burst: Double, clock: Clock, maxClients: Int = 100_000) {
        self.perSecond = perSecond
        self.burst = max(1, burst)
        self.clock = clock
        self.maxClients = max(2, maxClients)
    }

    /// How many clients are tracked (tests).
    var trackedClients: Int { buckets.withLock { $0.count } }

    /// nil when the request may go ahead, else the seconds to wait.
    func delay(for client: String) -> Int? {
        guard perSecond > 0 else { return nil }
        let now = clock.uptimeNanoseconds()
        return buckets.withLock { buckets in
            var bucket = buckets[client] ?? Bucket(tokens: burst, updated: now)
            let elapsed = Double(now &- bucket.updated) / 1e9
            bucket.tokens = min(burst, bucket.tokens + elapsed * perSecond)
            bucket.updated = now
            defer {
                buckets[client] = bucket
                if buckets.count > maxClients { prune(&buckets, now: now) }
            }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return max(1, Int(((1 - bucket.tokens) / perSecond).rounded(.up)))
        }
    }

    /// Forgets the clients whose bucket is full again by now (they went quiet; one coming back starts full all
    /// the same), judged at `now`: a bucket's stored count is as of its last request, and read as it was, a
    /// client that once spent two tokens was kept for good. If more than half the limit remain (that many
    /// clients active at once), the least recently seen go too, so a prune is rare, not one per request.
    private func prune(_ buckets: inout [String: Bucket], now: UInt64) {
        buckets = buckets.filter { _, bucket in
            bucket.tokens + Double(now &- bucket.updated) / 1e9 * perSecond < burst
        }
        let keep = maxClients / 2
        guard buckets.count > keep else { return }
        let recent = buckets.sorted { $0.value.updated > $1.value.updated }.prefix(keep)
        buckets = Dictionary(uniqueKeysWithValues: recent.map { ($0.key, $0.value) })
    }
}
