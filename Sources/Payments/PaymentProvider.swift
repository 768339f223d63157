/// The seam between linkout's checkout and whoever takes the money. The application asks a provider to start a
/// payment for a checkout and sends the person to the returned URL with `303 See Other`; the outcome arrives
/// later and separately (a Stripe webhook, or the demo page's completion), never as this call's return value.
///
/// `startCheckout` blocks (the Stripe provider calls Stripe through the blocking libcurl client), so call it
/// from a worker thread, never from an event loop. It is safe to call again for the same
/// `CheckoutRequest.intentId`: a provider must answer a repeat with the same session, not a second one (the
/// person may press the button twice, or a retry page may resend the form).
public protocol PaymentProvider: Sendable {
    /// A short, stable name for logs and metrics: `demo`, `stripe`.
    var name: String { get }

    /// Starts (or finds again) the payment session for one checkout intent.
    func startCheckout(_ request: CheckoutRequest) throws(PaymentError) -> CheckoutRedirect
}
