/// Where a paid purchase stands after refunds and cancellations.
public enum PurchaseStatus: String, Sendable, Codable, CaseIterable {
    case paid
    case partiallyRefunded = "partially_refunded"
    case refunded
    /// A subscription that will not renew.
    case ended
}
