/// linkout's own name for one landing's checkout: given when a token first lands, carried through the payment
/// provider's session and back, so a payment finds its token without exposing the token itself.
public struct CheckoutID: Identifier {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
}
