/// A product of the operator's catalog (`config.json`'s `products`), as a landing names it and a report's
/// `productId` carries it.
public struct ProductID: Identifier {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
}
