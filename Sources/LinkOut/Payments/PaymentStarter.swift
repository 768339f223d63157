import Dispatch
import Domain
import Lifecycle
import Logging
import Payments
import Storage
import Synchronization

/// Starts the payment for a product chosen on a checkout: one intent per product, currency and attempt, so the
/// same form posted again (a double tap, a retry after the provider failed) reuses the session already made,
/// and the provider keeps it to one session per intent even when our first call timed out after the session was
/// made (Stripe by an `Idempotency-Key` derived from the intent; Paddle by looking for the intent's transaction).
/// A new attempt starts only after a session expired or failed.
struct PaymentStarter: Sendable {
    enum Outcome: Sendable {
        /// Send the person here (303).
        case redirect(String)
        /// The choice was paid already, or a delayed payment of it is under way: send the person to the result
        /// page of that session.
        case paid(sessionId: String)
        /// The provider could not be reached or refused: show a page with a retry button, never a 5xx.
        case unavailable
        /// The token expires before a payment could complete: the person should open the link from the app again.
        case linkExpiring
    }

    let provider: any PaymentProvider
    let ledger: Ledger
    let identifiers: Identifiers
    let configuration: Configuration
    let logger: Logger
    let clock: Clock
    let inFlight = IntentsInFlight()

    /// `browserSession`: the session cookie of the person paying; only that browser is later shown the code.
    func start(
        checkout: CheckoutRecord,
        product: Product,
        price: Money,
        language: String,
        browserSession: String
    ) throws -> Outcome {
        let sessions = try ledger.payments.paymentSessions(checkoutId: checkout.id).filter {
            $0.productId.rawValue == product.id && $0.currency == price.currency
        }
        let attempt = sessions.filter { $0.state == .expired || $0.state == .failed }.count
        let intentId = identifiers.intentId(
            checkoutId: checkout.id,
            productId: ProductID(product.id),
            amount: price.decimalText,
            currency: price.currency,
            attempt: attempt
        )
        if let existing = sessions.first(where: { $0.intentId == intentId }) {
            return Self.outcome(existing)
        }
        // Apple takes no line item dated after the token's expiry, so the payment page closes before it does; with
        // less than the provider's shortest session (Stripe: 30 minutes) left, a fresh link from the app is the way.
        let nowSeconds = clock.nowSeconds()
        let limits = configuration.payments.registration
        var expiresAt: Int64?
        if let tokenExpiry = checkout.tokenExpiresAt.map({ $0 / 1000 }),
            tokenExpiry < nowSeconds + limits.sessionLifetime / 1000
        {
            let shortest = (limits.shortestSession + Self.callAllowance) / 1000
            guard tokenExpiry - nowSeconds >= shortest else { return .linkExpiring }
            expiresAt = tokenExpiry
        }
        let request = checkoutRequest(
            intentId: intentId,
            checkout: checkout,
            product: product,
            price: price,
            language: language,
            expiresAt: expiresAt
        )
        // One provider call per intent at a time: a double tap waits for the first one's call, then goes where it
        // went (the browser shows the last answer, so the second must not be an error page).
        guard inFlight.begin(intentId) else {
            guard inFlight.waitForEnd(of: intentId, upTo: Self.doubleTapWait),
                let made = try ledger.payments.paymentSessions(checkoutId: checkout.id).first(where: {
                    $0.intentId == intentId
                })
            else { return .unavailable }
            return Self.outcome(made)
        }
        defer { inFlight.end(intentId) }
        guard let redirect = callProvider(request) else { return .unavailable }
        let url: String
        do throws(StorageError) {
            url = try record(redirect, for: request, price: price, browserSession: browserSession)
        } catch {
            // The provider named a session another payment has: it is not this intent's, so no one is sent there.
            guard error.code == .constraint,
                let known = try ledger.payments.paymentSession(id: redirect.sessionId),
                known.intentId != request.intentId
            else { throw error }
            logger.error(
                "the payment provider answered with a session of another payment",
                ["payment.provider": provider.id.rawValue]
            )
            return .unavailable
        }
        return .redirect(url)
    }

    /// What the provider is asked for: the product in the page's language, and linkout's own way back.
    private func checkoutRequest(
        intentId: String,
        checkout: CheckoutRecord,
        product: Product,
        price: Money,
        language: String,
        expiresAt: Int64?
    ) -> CheckoutRequest {
        let base = configuration.server.baseURL
        return CheckoutRequest(
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
            // The provider adds how it names the session (Stripe: `?session_id={CHECKOUT_SESSION_ID}`).
            successURL: base + "/checkout/\(checkout.id)/done",
            cancelURL: base + "/checkout/\(checkout.id)",
            expiresAt: expiresAt
        )
    }

    /// The provider's payment page for `request`, or nil (logged) when it cannot give one now.
    private func callProvider(_ request: CheckoutRequest) -> CheckoutRedirect? {
        do throws(PaymentError) {
            let redirect = try provider.startCheckout(request)
            guard PaymentPageRule.allows(redirect.url) else {
                throw PaymentError(
                    .rejected,
                    "the provider answered with a payment page linkout does not send anyone to"
                )
            }
            return redirect
        } catch {
            let metadata = [
                // Not the intent or checkout id: either one opens the payment page (the demo's is the link itself).
                "payment.provider": provider.id.rawValue, "error": error.description,
            ]
            if error.kind == .rejected {
                logger.error("the payment provider refused to start a payment", metadata)
            } else {
                logger.warning("the payment provider is unavailable", metadata)
            }
            return nil
        }
    }

    /// Records the intent and the provider's session before the person is sent there; returns where to send them
    /// (the session recorded first, should two requests race).
    private func record(
        _ redirect: CheckoutRedirect,
        for request: CheckoutRequest,
        price: Money,
        browserSession: String
    )
        throws(StorageError) -> String
    {
        let now = clock.nowMilliseconds()
        _ = try ledger.tokens.recordCheckoutIntent(
            checkoutId: request.checkoutId,
            productId: ProductID(request.product.id),
            currency: price.currency,
            amount: price.decimalText,
            at: now
        )
        let recorded = try ledger.payments.recordPaymentSession(
            PaymentSessionRecord(
                sessionId: redirect.sessionId,
                provider: provider.id,
                intentId: request.intentId,
                checkoutId: request.checkoutId,
                externalPurchaseId: request.externalPurchaseId,
                productId: ProductID(request.product.id),
                currency: price.currency,
                amount: price.decimalText,
                language: request.language,
                url: redirect.url,
                state: .open,
                createdAt: now,
                updatedAt: now,
                browserHash: identifiers.browserHash(session: browserSession)
            )
        )
        return recorded.url
    }

    /// Added to the provider's shortest session: the time the call itself may take.
    static let callAllowance = Milliseconds.minute
    /// How long a double tap waits for the first tap's provider call (its attempts and a retry fit).
    static let doubleTapWait = DispatchTimeInterval.seconds(20)

    /// Where a session made for the intent sends the person: its page while open, else its result.
    private static func outcome(_ session: PaymentSessionRecord) -> Outcome {
        session.state == .open ? .redirect(session.url) : .paid(sessionId: session.sessionId)
    }
}

/// Intents whose provider call is under way, each with a group its other requests can wait on.
final class IntentsInFlight: Sendable {
    private struct Call {
        let done: DispatchGroup
        var waiting: Int
    }

    /// Requests that wait for one call at most: impatient clicks (a person, or the browser retrying). More answer
    /// at once, so a form posted over and over cannot hold the handlers' threads while a slow provider answers.
    static let waitersPerCall = 8

    private let calls = Mutex<[String: Call]>([:])

    /// False when the intent is already in flight.
    func begin(_ intent: String) -> Bool {
        calls.withLock { calls in
            guard calls[intent] == nil else { return false }
            let done = DispatchGroup()
            done.enter()
            calls[intent] = Call(done: done, waiting: 0)
            return true
        }
    }

    /// Waits until the intent's call ends (true), or `timeout` passes or enough others wait already (false).
    func waitForEnd(of intent: String, upTo timeout: DispatchTimeInterval) -> Bool {
        enum Join { case ended, full, waiting(DispatchGroup) }
        let join = calls.withLock { calls -> Join in
            guard var call = calls[intent] else { return .ended }
            guard call.waiting < Self.waitersPerCall else { return .full }
            call.waiting += 1
            calls[intent] = call
            return .waiting(call.done)
        }
        let done: DispatchGroup
        switch join {
        case .ended: return true
        case .full: return false
        case .waiting(let group): done = group
        }
        defer {
            calls.withLock { calls in
                if var call = calls[intent], call.done === done {
                    call.waiting -= 1
                    calls[intent] = call
                }
            }
        }
        return done.wait(timeout: .now() + timeout) == .success
    }

    func end(_ intent: String) { calls.withLock { $0.removeValue(forKey: intent) }?.done.leave() }
}
