/// linkout's own name for one landing's checkout: given when a token first lands, carried through the payment
/// provider's session and back, so a payment finds its token without exposing the token itself.
public struct CheckoutID: Identifier {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// Characters of the time that leads a checkout id from release 0.29.0 on, and of the HMAC (or fresh id)
    /// after it, which was the whole id before.
    public static let timeLength = 9
    public static let untimedLength = 26

    /// The id this one's checkout had before ids led with a time (the same HMAC alone); nil for an id without a
    /// time. A token recorded before keeps its checkout under that id, and `TokenStore.checkout(id:)` finds it
    /// by either.
    public var withoutTime: CheckoutID? {
        guard rawValue.utf8.count == Self.timeLength + Self.untimedLength else { return nil }
        return CheckoutID(rawValue: String(rawValue.dropFirst(Self.timeLength)))
    }

    /// Whether a later sighting of a token stored under `stored` needs this id recorded as another way to that
    /// checkout. The id leads with the token's creation date, and the same externalPurchaseId can come with
    /// another date (a token made up by hand; Apple's documentation examples share one id): its redirect and
    /// its forward's URL carry this id, which must lead to the token's one checkout. The id's older form leads
    /// there already (`withoutTime`), so a token recorded before 0.29.0 needs none.
    public func needsAlias(forStored stored: CheckoutID) -> Bool {
        self != stored && withoutTime != stored
    }
}
