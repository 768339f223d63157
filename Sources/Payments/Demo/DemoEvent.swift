public import Domain
import Foundation

/// What the demo's payment page stores when the person completes or cancels it: the same kind of raw event a
/// provider's webhook delivers, kept and deduplicated under the demo's id and acted on from storage like one.
/// It carries the request the session was started with, so acting on it needs nothing but the event.
public struct DemoEvent: Sendable, Equatable, Codable {
    public static let completed = "demo.payment.completed"
    public static let cancelled = "demo.payment.cancelled"
    /// The operator refunded a completed demo purchase in full (`POST /admin/demo/purchases/{id}/refund`), so
    /// the refund's whole path (Apple's `REFUND` line item, `purchase.refunded`, the app's entitlement ending)
    /// runs without a provider.
    public static let refunded = "demo.payment.refunded"

    /// `demo_<intentId>_completed`: one completion (and one cancellation, one refund) per intent, however often
    /// the page is posted.
    public var id: String
    public var type: String
    /// UNIX ms: when the person pressed the button.
    public var created: Int64
    public var intentId: String
    public var checkoutId: CheckoutID
    public var externalPurchaseId: ExternalPurchaseID?
    public var bundleId: BundleID
    public var productId: ProductID
    /// The subscription's interval (`month`, 1); nil for a one-time purchase.
    public var intervalUnit: String?
    public var intervalCount: Int?
    public var currency: CurrencyCode
    /// Decimal text, as the catalog has it.
    public var amount: String

    /// The event for `request` of `type` at `at`.
    public init(_ type: String, request: CheckoutRequest, at: Int64) {
        let suffix =
            switch type {
            case Self.completed: "_completed"
            case Self.refunded: "_refunded"
            default: "_cancelled"
            }
        id = DemoPaymentProvider.sessionId(intentId: request.intentId) + suffix
        self.type = type
        created = at
        intentId = request.intentId
        checkoutId = request.checkoutId
        externalPurchaseId = request.externalPurchaseId
        bundleId = request.bundleId
        productId = ProductID(request.product.id)
        if case .subscription(let interval) = request.product.kind {
            intervalUnit = interval.unit.rawValue
            intervalCount = interval.count
        }
        currency = request.price.currency
        amount = request.price.amount
    }

    /// The body to store, in a fixed key order.
    public func body() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(self))
    }

    public static func decode(_ body: [UInt8]) throws -> DemoEvent {
        try JSONDecoder().decode(DemoEvent.self, from: Data(body))
    }

    /// The request rebuilt from the event (the product's display name is not needed to act on it).
    var request: CheckoutRequest {
        var kind = CheckoutRequest.Product.Kind.oneTime
        if let unit = intervalUnit.flatMap(BillingInterval.Unit.init(rawValue:)) {
            kind = .subscription(BillingInterval(unit, count: intervalCount ?? 1))
        }
        return CheckoutRequest(
            intentId: intentId,
            checkoutId: checkoutId,
            externalPurchaseId: externalPurchaseId,
            bundleId: bundleId,
            product: CheckoutRequest.Product(id: productId.rawValue, displayName: productId.rawValue, kind: kind),
            price: CheckoutRequest.Price(currency: currency, amount: amount),
            language: "en",
            successURL: "",
            cancelURL: ""
        )
    }
}
