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
    /// Above this many tracked clients, full (idle) buckets are dropped; memory stays bounded under a flood.
    static let maxClients = 100_000

    /// Buckets refill by the clock's monotonic reading (a wall-clock step neither drains nor fills them).
    let clock: Clock

    init(perSecond: Double, burst: Double, clock: Clock) {
        self.perSecond = perSecond
        self.burst = max(1, burst)
        self.clock = clock
    }

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
                if buckets.count > Self.maxClients { buckets = buckets.filter { $0.value.tokens < burst - 1 } }
            }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return max(1, Int(((1 - bucket.tokens) / perSecond).rounded(.up)))
        }
    }
}
