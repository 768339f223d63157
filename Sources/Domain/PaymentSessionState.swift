/// Where a payment session started from a checkout stands.
public enum PaymentSessionState: String, Sendable, Codable, CaseIterable {
    /// Created; the person is paying (or left without finishing).
    case open
    /// Completed with a delayed payment method that has not paid yet.
    case pending
    /// Paid.
    case complete
    /// Expired unpaid, or cancelled: the person may start again.
    case expired
    /// A delayed payment failed.
    case failed
}
