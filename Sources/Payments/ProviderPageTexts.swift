/// The localization keys a provider's pages use (`Public/locales/*.json`): a provider brings its own texts, the
/// pages never ask which provider it is.
public struct ProviderPageTexts: Sendable, Equatable {
    /// Near the pay button: who takes the payment and whether it is real (`checkout_provider_stripe`).
    public var checkoutNote: String
    /// The provider adds tax on its own page (Stripe Tax): the checkout says tax is added, not included.
    public var addsTax: Bool
    /// The result page's title and message for a completed payment, by the provider's mode: `result_paid_…`
    /// for live money, `result_test_…` for test mode, `result_demo_…` for the demo.
    public var completedTitle: String
    public var completedMessage: String

    public init(checkoutNote: String, addsTax: Bool = false, mode: PaymentMode) {
        self.checkoutNote = checkoutNote
        self.addsTax = addsTax
        let stem =
            switch mode {
            case .live: "result_paid"
            case .test: "result_test"
            case .simulated: "result_demo"
            }
        completedTitle = stem + "_title"
        completedMessage = stem + "_message"
    }
}
