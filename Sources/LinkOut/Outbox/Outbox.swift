import Storage

/// A durable queue of things linkout delivers to someone else (reports to Apple, entitlement webhooks to the
/// app's backend), in one shape: an item is written before it is sent, so a crash retries the same bytes; it is
/// claimed with a lease before it is sent, so another instance on the same database skips it meanwhile; every
/// try is recorded with when to try again (`backoff`), which ends the lease; and claims a pass did not send are
/// given back. `OutboxSender` runs a pass over any outbox; what a delivery is stays with the caller.
protocol Outbox: Sendable {
    associatedtype Item: Sendable
    /// What one try came to, as the outbox records it.
    associatedtype Attempt: Sendable

    /// How long an item waits after a failed try.
    static var backoff: Backoff { get }

    /// The item's key in the outbox.
    static func key(of item: Item) -> String

    /// Claims up to `limit` items due at `now` (pending, due, not leased by anyone), leased until `leaseUntil`.
    func claimDue(now: Int64, limit: Int, leaseUntil: Int64) throws(StorageError) -> [Item]

    /// Records a try of `item` and when the next is due; ends its lease.
    func record(_ attempt: Attempt, for item: Item) throws(StorageError)

    /// Gives back claims that will not be sent now (sending paused, or the pass is over), so the next pass, or
    /// another instance, takes them without waiting for their lease to end.
    func release(_ keys: [String]) throws(StorageError)

    /// Whether a claimed item is now held back (reporting blocked for its app since it was claimed): it is not
    /// sent, and its claim is given back at the end of the pass.
    func holdsBack(_ item: Item) -> Bool
}

extension Outbox {
    func holdsBack(_ item: Item) -> Bool { false }

    /// When an item tried at `at` after `attempts` earlier tries is due again.
    static func retryAt(_ at: Int64, attempts: Int64) -> Int64 {
        at + backoff.milliseconds(attempts: attempts)
    }
}
