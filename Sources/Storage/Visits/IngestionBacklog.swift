/// Visits acknowledged from the journal but not yet folded into the tables: how many, and since when the oldest
/// has waited. Zero on engines whose landings commit to the tables before they answer (PostgreSQL) and in tools.
public struct IngestionBacklog: Sendable, Equatable {
    public var visits: Int
    /// When the oldest waiting visit landed (milliseconds since 1970); nil when none waits.
    public var oldestAt: Int64?

    public static let empty = IngestionBacklog(visits: 0, oldestAt: nil)

    /// Whole seconds the oldest waiting visit has waited at `now` (0 when none waits).
    public func ageSeconds(now: Int64) -> Int {
        guard let oldestAt else { return 0 }
        return Int(max(0, now - oldestAt) / 1000)
    }
}
