public import Domain

/// What recording a token or visit found.
public struct RecordOutcome: Sendable, Equatable {
    public var checkoutId: CheckoutID
    /// The token's visit count after this visit (0 for tokenless visits and app-forwarded tokens).
    public var visitCount: Int64
    /// Whether this was the first time the token was seen.
    public var isNewToken: Bool
    /// What a forwarded token's `appAccountToken` did to the token's binding (`.none` for visits).
    public var binding: AccountBinding

    package init(checkoutId: CheckoutID, visitCount: Int64, isNewToken: Bool, binding: AccountBinding = .none) {
        self.checkoutId = checkoutId
        self.visitCount = visitCount
        self.isNewToken = isNewToken
        self.binding = binding
    }
}
