/// How a notification reached linkout: Apple POSTed it (`delivery`), or it was fetched with Get Notification
/// History (`history`) after a delivery was missed.
public enum NotificationSource: String, Sendable, Codable {
    case delivery
    case history
}
