/// Spans of time in milliseconds, the unit Apple uses for every date in tokens, reports and notifications
/// (UNIX time in ms), and so the unit of every stored time in linkout.
public enum Milliseconds {
    public static let second: Int64 = 1_000
    public static let minute: Int64 = 60_000
    public static let hour: Int64 = 3_600_000
    /// A whole UTC day. Apple counts its report windows in days (10 days to report a token, 3 years back for a
    /// line item), and the dashboard's days are `timestamp / day`.
    public static let day: Int64 = 86_400_000

    /// `count` whole days.
    public static func days(_ count: Int64) -> Int64 { count * day }
}
