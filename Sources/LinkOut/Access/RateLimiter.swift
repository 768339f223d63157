import Lifecycle
import Synchronization

/// A token bucket per client address: `perSecond` sustained, `burst` at once. Answers how long to wait when a
/// client is over its budget (the `Retry-After` of a 429).
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: UInt64
        /// The order of the client's last request among all clients': the clock's reading can tie (a coarse or
        /// stopped clock, a burst within one tick), and the least recently seen must still be told apart.
        var seen: UInt64
    }

    private struct Table {
        var buckets: [String: Bucket] = [:]
        var requests: UInt64 = 0
    }

    let perSecond: Double
    let burst: Double
    private let table = Mutex(Table())
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
    var trackedClients: Int { table.withLock { $0.buckets.count } }

    /// nil when the request may go ahead, else the seconds to wait.
    func delay(for client: String) -> Int? {
        guard perSecond > 0 else { return nil }
        let now = clock.uptimeNanoseconds()
        return table.withLock { table in
            table.requests &+= 1
            var bucket = table.buckets[client] ?? Bucket(tokens: burst, updated: now, seen: 0)
            let elapsed = Double(now &- bucket.updated) / 1e9
            bucket.tokens = min(burst, bucket.tokens + elapsed * perSecond)
            bucket.updated = now
            bucket.seen = table.requests
            defer {
                table.buckets[client] = bucket
                if table.buckets.count > maxClients { prune(&table.buckets, now: now) }
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
        let recent = buckets.sorted { $0.value.seen > $1.value.seen }.prefix(keep)
        buckets = Dictionary(uniqueKeysWithValues: recent.map { ($0.key, $0.value) })
    }
}
