/// A processed payment event whose Apple line item is held, for the token it belongs to and why (an exchange
/// rate within 48 hours of the sale is missing). Its line item is made from the event once the cause is gone.
public struct HeldPaymentEvent: Sendable {
    public var event: StoredPaymentEvent
    public var externalPurchaseId: String
    public var reason: String

    public init(event: StoredPaymentEvent, externalPurchaseId: String, reason: String) {
        self.event = event
        self.externalPurchaseId = externalPurchaseId
        self.reason = reason
    }
}
