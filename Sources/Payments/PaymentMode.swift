/// Whether a provider's payments move money, and whose: what decides which tokens get a purchase reported to
/// Apple (a payment that is not live only for a sandbox token) and what the pages tell the person.
public enum PaymentMode: Sendable, Equatable {
    /// Real money with a live key (Stripe `sk_live_`).
    case live
    /// The provider's test mode (Stripe `sk_test_`, a sandbox): a test card, nothing charged.
    case test
    /// No provider at all: linkout's own page completes the payment and nothing is charged (the demo).
    case simulated
}
