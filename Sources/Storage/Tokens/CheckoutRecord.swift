public import Domain

/// A checkout as the checkout page needs it.
public struct CheckoutRecord: Sendable, Equatable {
    public var id: String
    public var bundleId: String
    public var externalPurchaseId: String?
    public var environment: Environment?
    public var tokenExpiresAt: Int64?
}
