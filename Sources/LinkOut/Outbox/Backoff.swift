import Domain

/// How long a delivery that failed waits before its next try, the same for every outbox: 5 s doubling with each
/// attempt, capped at an hour. A receiver down for a deploy is tried again within seconds; one down for a day is
/// not hammered.
enum Backoff: Sendable {
    /// Exactly the doubling (entitlement webhooks: one receiver, the operator's, reads the retry times).
    case exact
    /// Equal jitter: between half and all of the doubling, at least 1 s (Apple reports: the random half spreads
    /// the retries of many reports that failed together).
    case jittered

    /// The wait after `attempts` earlier attempts, in milliseconds.
    func milliseconds(attempts: Int64) -> Int64 {
        let ceiling = Self.ceilingMilliseconds(attempts: attempts)
        switch self {
        case .exact: return ceiling
        case .jittered: return max(1_000, Int64.random(in: ceiling / 2...ceiling))
        }
    }

    /// 5 s × 2^attempts, at most an hour.
    static func ceilingMilliseconds(attempts: Int64) -> Int64 {
        min(Milliseconds.hour, 5_000 * (Int64(1) << min(max(0, attempts), 20)))
    }
}
