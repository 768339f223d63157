/// A claim on outbox work (a report, a webhook delivery) by one instance until a time: other instances sharing
/// the database leave the row alone until then, and take it over after (its owner crashed or hangs).
public struct Lease: Sendable, Equatable {
    /// The claiming instance (`Ledger.instance`).
    public let owner: String
    /// Milliseconds since 1970, on the clock that decides when work is due.
    public let until: Int64

    public init(owner: String, until: Int64) {
        self.owner = owner
        self.until = until
    }
}
