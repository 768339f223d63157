/// Where a paid purchase stands after refunds and cancellations.
public enum PurchaseStatus: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case paid
    case partiallyRefunded = "partially_refunded"
    case refunded
    /// A subscription that will not renew.
    case ended

    /// The stored name (`partially_refunded`), in logs and exports as in the table.
    public var description: String { rawValue }
}
