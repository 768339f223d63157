/// The localization keys a provider's pages use (`Public/locales/*.json`): a provider brings its own texts, the
/// pages never ask which provider it is.
public struct ProviderPageTexts: Sendable, Equatable {
    /// Near the pay button: who takes the payment and whether it is real (`checkout_provider_stripe`).
    public var checkoutNote: String
    /// What the checkout says of tax beside the price.
    public enum TaxNote: Sendable, Equatable {
        /// The provider adds tax on its own page (Stripe Tax): "tax is added" (`checkout_tax_added`).
        case added
        /// The price is what the person pays, tax included (`checkout_tax_included`), unless the sale carries
        /// none (`payments.taxRates` `"none"` with a provider that works out no tax): then nothing is said.
        case included
        /// The sale carries no tax (the demo's, tax 0 unless its page is given one): nothing is said, where
        /// "Prices include VAT." contradicted the tax 0 Apple is told.
        case none
    }

    public var taxNote: TaxNote
    /// The result page's title and message for a completed payment, by the provider's mode: `result_paid_…`
    /// for live money, `result_test_…` for test mode, `result_demo_…` for the demo.
    public var completedTitle: String
    public var completedMessage: String

    public init(checkoutNote: String, taxNote: TaxNote = .included, mode: PaymentMode) {
        self.checkoutNote = checkoutNote
        self.taxNote = taxNote
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
