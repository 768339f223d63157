public import Domain

/// A checkout as the checkout page needs it.
public struct CheckoutRecord: Sendable, Equatable {
    public var id: CheckoutID
    public var bundleId: BundleID
    public var externalPurchaseId: ExternalPurchaseID?
    public var environment: Environment?
    public var tokenExpiresAt: Int64?
}
