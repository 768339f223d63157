import Lifecycle
import Logging
import Payments
import Storage

/// Starts the payment for a product chosen on a checkout: one intent per product, currency and attempt, so the
/// same form posted again (a double tap, a retry after the provider failed) reuses the session already made,
/// and the provider's `Idempotency-Key` (derived from the intent) keeps it to one session even when our first
/// call timed out after Stripe had created it. A new attempt starts only after a session expired or failed.
struct PaymentStarter: Sendable {
    enum Outcome: Sendable {
        /// Send the person here (303).
        case redirect(String)
        /// The provider could not be reached or refused: show a page with a retry button, never a 5xx.
        case unavailable
    }

    let provider: any PaymentProvider
    let ledger: Ledger
    let identifiers: Identifiers
    let configuration: Configuration
    let logger: Logger
    let clock: Clock

    /// `browserSession`: the session cookie of the person paying; only that browser is later shown the code.
    func start(
        checkout: CheckoutRecord,
        product: Product,
        price: Money,
        language: String,
        browserSession: String
    ) throws -> Outcome {
        let sessions = try ledger.paymentSessions(checkoutId: checkout.id).filter {
            $0.productId == product.id && $0.currency == price.currency
        }
        let attempt = sessions.filter { $0.state == .expired || $0.state == .failed }.count
        let intentId = identifiers.intentId(
            checkoutId: checkout.id,
            productId: product.id,
            amount: price.decimalText,
            currency: price.currency,
            attempt: attempt
        )
        if let existing = sessions.first(where: { $0.intentId == intentId }) {
            return .redirect(
                existing.state == .open ? existing.url : resultURL(checkout.id, session: existing.sessionId)
            )
        }
        let base = configuration.server.baseURL
        let request = CheckoutRequest(
            intentId: intentId,
            checkoutId: checkout.id,
            externalPurchaseId: checkout.externalPurchaseId,
            bundleId: checkout.bundleId,
            product: CheckoutRequest.Product(
                id: product.id,
                displayName: product.name(language: language),
                kind: product.interval.map { .subscription($0) } ?? .oneTime
            ),
            price: CheckoutRequest.Price(currency: price.currency, amount: price.decimalText),
            language: language,
            successURL: base + "/checkout/\(checkout.id)/done?session_id={CHECKOUT_SESSION_ID}",
            cancelURL: base + "/checkout/\(checkout.id)",
            automaticTax: configuration.payments.stripe.automaticTax
        )
        let redirect: CheckoutRedirect
        do {
            redirect = try provider.startCheckout(request)
        } catch {
            let metadata = [
                "payment.provider": provider.name, "checkout.intent": intentId, "error": error.description,
            ]
            if error.kind == .rejected {
                logger.error("the payment provider refused to start a payment", metadata)
            } else {
                logger.warning("the payment provider is unavailable", metadata)
            }
            return .unavailable
        }
        let now = clock.nowMilliseconds()
        _ = try ledger.recordCheckoutIntent(
            checkoutId: checkout.id,
            productId: product.id,
            currency: price.currency,
            amount: price.decimalText,
            at: now
        )
        let recorded = try ledger.recordPaymentSession(
            PaymentSessionRecord(
                sessionId: redirect.sessionId,
                provider: provider.name,
                intentId: intentId,
                checkoutId: checkout.id,
                externalPurchaseId: checkout.externalPurchaseId,
                productId: product.id,
                currency: price.currency,
                amount: price.decimalText,
                language: language,
                url: redirect.url,
                state: .open,
                createdAt: now,
                updatedAt: now,
                browserHash: identifiers.browserHash(session: browserSession)
            )
        )
        return .redirect(recorded.url)
    }

    func resultURL(_ checkoutId: String, session: String) -> String {
        "/checkout/\(checkoutId)/done?session_id=\(session)"
    }
}
