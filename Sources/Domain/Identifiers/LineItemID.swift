/// The `lineItemId` of one line item in an External Purchase report: unique per token, and what a later refund or
/// correction names as its `referenceLineItemId`.
public struct LineItemID: Identifier {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// The line item of a chargeback: keyed on the dispute (or the provider's refund record), so the line item of
    /// a later chargeback of the same payment is a new one and its reversal finds it again.
    public static func chargeback(of paymentId: String, dispute disputeId: String) -> LineItemID {
        LineItemID(paymentId + ":dispute:" + disputeId)
    }
}
