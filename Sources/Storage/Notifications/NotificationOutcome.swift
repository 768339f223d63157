/// What acting on a notification came to, stored on it and counted in `linkout_notifications_total{outcome}`.
public enum NotificationOutcome: String, Sendable, Codable, CaseIterable {
    /// Not about an external purchase token linkout acts on.
    case ignored
    /// Apple says a token linkout never saw is unreported: recorded from Apple's signed copy and reported.
    case unrecognizedReported = "unrecognized_reported"
    /// Apple says a token linkout knows is unreported: its report is due now.
    case dueNow = "due_now"
    /// Apple says it is unreported, or reminds of it, but a report of it is already in.
    case alreadyReported = "already_reported"
    /// A token unknown until now, recorded from Apple's signed copy.
    case recorded
    /// A token linkout already knew.
    case known
    /// A reminder of a token reported as a duplicate: Apple stops once that report is in.
    case reportedDuplicate = "reported_duplicate"
}
