import Crypto
import Domain
import Foundation
public import Outbound

/// Starts payments as Stripe Checkout Sessions (`POST /v1/checkout/sessions`, Stripe API reference: Create a Checkout
/// Session) through the libcurl client, and sends the person to Stripe's hosted page. What Stripe learns about the
/// purchase comes back in webhooks (`StripeEvent`), carrying the ids put into the session here.
public struct StripePaymentProvider: PaymentProvider {
    public struct Configuration: Sendable, CustomStringConvertible {
        /// `sk_live_…`, `sk_test_…` or a restricted `rk_…` key. Sent only in the `Authorization` header; never
        /// printed (see `description`).
        public var secretKey: String
        /// Stripe's API; a local fake server in tests.
        public var apiBase = "https://api.stripe.com"
        /// Pinned so responses and webhook payloads keep one shape; set the webhook endpoint's version to the same
        /// value (`Stripe-Version`; Stripe: "Versioning"). Event decoding understands basil (2025-03-31) and later.
        public var apiVersion = "2026-09-30.endive"
        public var retry = StripeRetryPolicy()
        /// Time allowed for one attempt, connection included.
        public var attemptTimeout: Duration = .seconds(5)
        /// Time allowed for all attempts and pauses together: the person is looking at a spinner. No retry is
        /// started that could not finish inside it.
        public var totalTimeout: Duration = .seconds(12)
        public var connectTimeout: Duration = .seconds(3)
        /// CA file to trust instead of the system store, and an outbound proxy, as for Apple's API.
        public var caFile: String?
        public var proxy: String?
        /// `whsec_…` of the webhook endpoint. Never printed.
        public var webhookSecret = ""
        /// How old a webhook's signed timestamp may be, in seconds (Stripe's libraries use 300).
        public var webhookToleranceSeconds: Int64 = 300
        /// Let Stripe Tax compute tax (and collect the address it needs).
        public var automaticTax = false

        public init(secretKey: String) {
            self.secretKey = secretKey
        }

        public var description: String {
            "StripePaymentProvider.Configuration(apiBase: \(apiBase), apiVersion: \(apiVersion), key: [redacted])"
        }
    }

    public let configuration: Configuration
    let signature: TimestampedHMAC
    private let client: HTTPClient
    private let pause: @Sendable (Duration) -> Void

    /// `client` defaults to one made from `configuration`'s timeouts; pass one to share its connection pool (its
    /// own `totalTimeout` then bounds each attempt, so keep it near `attemptTimeout`).
    /// `pause` is how the provider waits between retries (tests pass a recorder).
    public init(
        configuration: Configuration,
        client: HTTPClient? = nil,
        pause: @escaping @Sendable (Duration) -> Void = StripePaymentProvider.sleep
    ) {
        self.configuration = configuration
        signature = .stripe(
            secret: configuration.webhookSecret,
            toleranceSeconds: configuration.webhookToleranceSeconds
        )
        self.client =
            client
            ?? .forProvider(
                connectTimeout: configuration.connectTimeout,
                attemptTimeout: configuration.attemptTimeout,
                caFile: configuration.caFile,
                proxy: configuration.proxy
            )
        self.pause = pause
    }

    public func startCheckout(_ request: CheckoutRequest) throws(PaymentError) -> CheckoutRedirect {
        var request = request
        if configuration.automaticTax { request.automaticTax = true }
        let form = try Self.sessionForm(for: request)
        let httpRequest = HTTPClientRequest(
            method: "POST",
            url: configuration.apiBase + "/v1/checkout/sessions",
            headers: [
                ("Authorization", "Bearer \(configuration.secretKey)"),
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Stripe-Version", configuration.apiVersion),
                ("Idempotency-Key", Self.idempotencyKey(intentId: request.intentId)),
                ("Accept", "application/json"),
            ],
            body: form.bytes
        )
        let response = try send(httpRequest)
        return try Self.redirect(from: response)
    }

    /// Reads the account's balance (`GET /v1/balance`): any key that may read it is a key Stripe takes, and
    /// reading it changes nothing.
    public func checkCredentials() throws(PaymentError) -> String {
        let response = try send(
            HTTPClientRequest(
                method: "GET",
                url: configuration.apiBase + "/v1/balance",
                headers: [
                    ("Authorization", "Bearer \(configuration.secretKey)"),
                    ("Stripe-Version", configuration.apiVersion),
                    ("Accept", "application/json"),
                ]
            )
        )
        // Only Stripe's balance object shows Stripe read the key: any 2xx page (a proxy's, a wrong apiBase) is not.
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        guard object?["object"] as? String == "balance" else {
            throw PaymentError(
                .unavailable,
                "\(configuration.apiBase) answered \(response.status) without Stripe's balance: check apiBase",
                status: response.status
            )
        }
        return "read the balance (\(mode == .live ? "live" : "test") key)"
    }

    /// Sends one request with Stripe's retry rules inside the total time budget.
    private func send(_ request: HTTPClientRequest) throws(PaymentError) -> HTTPClientResponse {
        let clock = ContinuousClock()
        let started = clock.now
        var retries = 0
        while true {
            let failure: PaymentError
            do {
                let response = try client.perform(request)
                switch StripeRetryPolicy.decide(
                    status: response.status,
                    shouldRetry: response.header("stripe-should-retry")
                ) {
                case .succeed: return response
                case .fail(let kind): throw Self.error(kind, from: response)
                case .retry: failure = Self.error(.unavailable, from: response)
                }
            } catch let error as HTTPClientError {
                failure = PaymentError(.unavailable, "Stripe could not be reached: \(error.description)")
            } catch let error as PaymentError {
                throw error
            } catch {
                throw PaymentError(.unavailable, "Stripe call failed")
            }
            retries += 1
            let delay = configuration.retry.delay(beforeRetry: retries)
            let elapsed = clock.now - started
            guard retries <= configuration.retry.maxRetries,
                elapsed + delay + configuration.attemptTimeout <= configuration.totalTimeout
            else { throw failure }
            pause(delay)
        }
    }

    /// Stripe's key for this intent. The same intent gives the same key for 24 hours of Stripe's memory, so a double
    /// click, a retry page or a retried POST all get the first session back (Stripe API reference: Idempotent
    /// requests).
    public static func idempotencyKey(intentId: String) -> String {
        "linkout-checkout-" + intentId
    }

    /// The Checkout Session parameters for a request (Stripe API reference: Create a Checkout Session), in a fixed
    /// order.
    public static func sessionForm(for request: CheckoutRequest) throws(PaymentError) -> StripeForm {
        guard !request.intentId.isEmpty, request.intentId.utf8.count <= 200 else {
            throw PaymentError(.rejected, "the checkout intent id must have 1 to 200 characters")
        }
        guard !request.product.id.isEmpty, !request.product.displayName.isEmpty else {
            throw PaymentError(.rejected, "the product needs an id and a display name")
        }
        let currency = request.price.currency.rawValue.lowercased()
        let unitAmount: Int64
        do {
            unitAmount = try StripeAmount.minorUnits(request.price.amount, currency: currency)
        } catch {
            throw PaymentError(.rejected, "price of \(request.product.id): \(error.description)")
        }
        var metadata: [StripeForm.Field] = []
        if let externalPurchaseId = request.externalPurchaseId {
            metadata.append(.init("external_purchase_id", .string(externalPurchaseId.rawValue)))
        }
        metadata.append(.init("bundle_id", .string(request.bundleId.rawValue)))
        metadata.append(.init("product_id", .string(request.product.id)))
        metadata.append(.init("checkout_id", .string(request.checkoutId.rawValue)))
        // Stripe keeps metadata values up to 500 characters (Stripe API reference: Metadata).
        for field in metadata {
            if case .string(let value) = field.value, value.utf8.count > 500 {
                throw PaymentError(.rejected, "metadata \(field.name) is longer than Stripe's 500 characters")
            }
        }

        var priceData: [StripeForm.Field] = [
            .init("currency", .string(currency)),
            .init("unit_amount", .integer(unitAmount)),
            .init("product_data", .object([.init("name", .string(request.product.displayName))])),
        ]
        let mode: String
        switch request.product.kind {
        case .oneTime:
            mode = "payment"
        case .subscription(let interval):
            guard interval.isValidForStripe else {
                throw PaymentError(.rejected, "a subscription bills at least once in three years")
            }
            mode = "subscription"
            priceData.append(
                .init(
                    "recurring",
                    .object([
                        .init("interval", .string(interval.unit.rawValue)),
                        .init("interval_count", .integer(Int64(interval.count))),
                    ])
                )
            )
        }

        var form = StripeForm()
        form.add("mode", .string(mode))
        form.add("client_reference_id", .string(request.checkoutId.rawValue))
        form.add(
            "line_items",
            .array([.object([.init("price_data", .object(priceData)), .init("quantity", .integer(1))])])
        )
        form.add("locale", .string(StripeLocale.forLanguage(request.language)))
        form.add("success_url", .string(successURL(request.successURL)))
        form.add("cancel_url", .string(request.cancelURL))
        form.add("metadata", .object(metadata))
        // The session's metadata stays on the session; these copies ride on the PaymentIntent (and so its charges and
        // refunds) or on the subscription (and so every invoice, as `parent.subscription_details.metadata`); Stripe API
        // reference: Create a Checkout Session.
        form.add(
            mode == "payment" ? "payment_intent_data" : "subscription_data",
            .object([.init("metadata", .object(metadata))])
        )
        if request.automaticTax {
            form.add("automatic_tax", .object([.init("enabled", .boolean(true))]))
        }
        // Off whatever the Dashboard says (Stripe changelog 2024-11-20.acacia: the parameter overrides it). With
        // Adaptive Pricing Stripe charges the person in a currency of its choosing and keeps the session's
        // `amount_total` and `currency` in ours, so Apple would be told an amount the person did not pay. The
        // person picks a currency on linkout's own page, and the session charges exactly that.
        form.add("adaptive_pricing", .object([.init("enabled", .boolean(false))]))
        // Between 30 minutes and 24 hours after creation (Stripe API reference: Create a Checkout Session).
        if let expiresAt = request.expiresAt { form.add("expires_at", .integer(expiresAt)) }
        return form
    }

    /// Stripe substitutes the literal `{CHECKOUT_SESSION_ID}` (Stripe: "Customize your success page"); the return page
    /// needs it to find the session.
    static func successURL(_ url: String) -> String {
        guard !url.contains("{CHECKOUT_SESSION_ID}") else { return url }
        return url + (url.contains("?") ? "&" : "?") + "session_id={CHECKOUT_SESSION_ID}"
    }

    static func redirect(from response: HTTPClientResponse) throws(PaymentError) -> CheckoutRedirect {
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        guard let id = object?["id"] as? String, let url = object?["url"] as? String, !id.isEmpty, !url.isEmpty
        else {
            throw PaymentError(.unavailable, "Stripe answered without a session id and url", status: response.status)
        }
        return CheckoutRedirect(url: url, sessionId: id)
    }

    /// An error from Stripe's answer: its `error.message` and `error.code` (or `type`), secrets redacted.
    static func error(_ kind: PaymentError.Kind, from response: HTTPClientResponse) -> PaymentError {
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        let error = object?["error"] as? [String: Any]
        let message = (error?["message"] as? String).map { "Stripe: \($0)" } ?? "Stripe answered \(response.status)"
        let code = (error?["code"] as? String) ?? (error?["type"] as? String)
        return PaymentError(kind, message, status: response.status, providerCode: code)
    }
}

extension StripePaymentProvider {
    /// Blocks the calling (worker) thread for `duration`: the pause between two attempts.
    public static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        // Time, not money: floating point is fine here.
        Thread.sleep(forTimeInterval: TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18)
    }
}
