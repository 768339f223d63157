public import Domain

/// One recorded landing visit (no IP address is ever stored).
public struct VisitRow: Sendable, Equatable, Codable {
    public var visitedAt: Int64
    public var landingPath: String
    public var checkoutId: CheckoutID
    /// Values of `Visit.utmParameterNames` the visit carried.
    public var utm: [String: String]
}

/// A product chosen on a checkout page.
public struct CheckoutIntentRow: Sendable, Equatable, Codable {
    public var checkoutId: CheckoutID
    public var productId: ProductID
    public var currency: CurrencyCode
    public var amount: String
    public var createdAt: Int64
}

/// Tables whose rows can be counted (tests and status output).
package enum CountableTable: String, Sendable {
    case tokens, visits, checkouts
    case checkoutIntents = "checkout_intents"
}
