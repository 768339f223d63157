/// A claim on outbox work (a report, a webhook delivery) by one instance until a time: other instances sharing
/// the database leave the row alone until then, and take it over after (its owner crashed or hangs).
public struct Lease: Sendable, Equatable {
    /// The claiming instance (`Ledger.instance`).
    public let owner: String
    /// Milliseconds since 1970, on the clock that decides when work is due.
    public let until: Int64

    /// How far past its longest wait a next attempt or a lease's end may lie before it is taken for a clock that
    /// was stepped back since it was set: the longest wait is an hour (the backoff's ceiling, a `Retry-After`
    /// held to an hour, `storage.leaseSeconds` at most), and an hour more allows for instances whose clocks
    /// disagree. Such a row is due, and its lease over: after a step back of a day, retries and leases waited
    /// out the day (README "A clock stepped back").
    public static let furthestAheadMilliseconds: Int64 = 2 * 3_600_000

    public init(owner: String, until: Int64) {
        self.owner = owner
        self.until = until
    }
}
