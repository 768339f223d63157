import Domain

/// A claim on outbox work (a report, a webhook delivery) by one instance until a time: other instances sharing
/// the database leave the row alone until then, and take it over after (its owner crashed or hangs).
public struct Lease: Sendable, Equatable {
    /// The claiming instance (`Ledger.instance`).
    public let owner: String
    /// Milliseconds since 1970, on the clock that decides when work is due.
    public let until: Int64

    /// How far ahead of now a next attempt or a lease's end may lie when it was set on this clock: an hour (the
    /// backoff's ceiling, a `Retry-After` held to an hour, `storage.leaseSeconds` at most), and an hour more for
    /// instances whose clocks disagree a little. Further ahead, it was set before the clock stepped back.
    public static let furthestAheadMilliseconds: Int64 = 2 * Milliseconds.hour

    public init(owner: String, until: Int64) {
        self.owner = owner
        self.until = until
    }
}
