/// Where a started payment continues: the application answers `303 See Other` with `url`, and keeps
/// `sessionId` with the checkout intent so the provider's later events can be matched to it.
public struct CheckoutRedirect: Sendable, Equatable {
    /// The page that takes the payment (Stripe's hosted Checkout page, or linkout's own demo page).
    public var url: String
    /// The provider's id of the session: `cs_…` for Stripe, `demo_<intentId>` for the demo provider.
    public var sessionId: String

    public init(url: String, sessionId: String) {
        self.url = url
        self.sessionId = sessionId
    }
}
