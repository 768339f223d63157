/// What a purchase buys: one payment for good, or a subscription billed each period (the catalog's `kind`, the
/// purchase's, and the entitlement's `kind`).
public enum PurchaseKind: String, Sendable, Codable, CaseIterable {
    case oneTime
    case subscription
}
