public import Lifecycle

/// A wall clock stepped back (README "Reporting every token to Apple": "A clock stepped back or forward … ends by
/// itself") left the outboxes' retries and this instance's leases set by the clock that ran ahead: a report or a
/// webhook whose retry was "in 5 s" on a clock a day ahead waited the day, with Apple's 10-day notice running.
extension Ledger {
    /// Brings those rows forward (`SQLDatabase.bringForward`) when this process first looks and whenever its wall
    /// clock has stepped back since; otherwise does nothing, without touching the database. Called by each outbox's
    /// pass before it claims. Returns how many rows were brought forward.
    @discardableResult
    public func bringForwardAfterClockStep(clock: Clock) throws(StorageError) -> Int {
        guard clockSteps.steppedBack(clock) else { return 0 }
        return try database.bringForward(now: clock.nowMilliseconds(), owner: instance)
    }
}
