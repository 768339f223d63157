/// Where a report stands in the outbox: `pending` (to send or being retried), `accepted` (Apple answered 200), or
/// `rejected` (Apple answered 400; not resent until the token's data changes).
public enum ReportState: String, Sendable, Codable, CaseIterable {
    case pending, accepted, rejected
}
