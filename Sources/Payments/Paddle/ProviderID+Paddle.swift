import Domain

extension ProviderID {
    /// Paddle Billing (API v1): the merchant of record, beside Stripe.
    public static let paddle = ProviderID("paddle")
}
