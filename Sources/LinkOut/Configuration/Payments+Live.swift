extension Configuration.Payments {
    /// Whether a payment can take real money: only Stripe with a live key (`sk_live_`, or a restricted
    /// `rk_live_`). The demo provider and Stripe's test mode never do, and the pages say so.
    var takesRealMoney: Bool {
        provider == .stripe && ["sk_live_", "rk_live_"].contains { stripe.secretKey.hasPrefix($0) }
    }
}
