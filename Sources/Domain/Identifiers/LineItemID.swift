/// The `lineItemId` of one line item in an External Purchase report: unique per token, and what a later refund or
/// correction names as its `referenceLineItemId`.
public struct LineItemID: Identifier {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
}
