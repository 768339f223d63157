extension BillingInterval {
    /// Whether Stripe accepts the interval (count ≥ 1 and at most three years; Stripe API reference: Create a Checkout
    /// Session).
    public var isValidForStripe: Bool {
        let limit: Int =
            switch unit {
            case .day: 1095
            case .week: 156
            case .month: 36
            case .year: 3
            }
        return count >= 1 && count <= limit
    }
}
