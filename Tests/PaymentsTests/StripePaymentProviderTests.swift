import Domain
import Outbound
import Synchronization
import TestSupport
import Testing

@testable import Payments

/// The Stripe provider through the real libcurl client against `FakeStripeServer` on 127.0.0.1.
@Suite("StripePaymentProvider")
struct StripePaymentProviderTests {
    /// Records the pauses between attempts instead of sleeping through them.
    final class Pauses: Sendable {
        let taken = Mutex<[Duration]>([])
        var count: Int { taken.withLock { $0.count } }
    }

    /// The error `body` throws, or nil (and a recorded issue) when it returns.
    static func failure(_ body: () throws(PaymentError) -> CheckoutRedirect) -> PaymentError? {
        do {
            _ = try body()
            Issue.record("expected a PaymentError")
            return nil
        } catch {
            return error
        }
    }

    /// Runs `body` with a fresh fake server and a provider pointed at it; the server stops even when it throws.
    func withStripe(
        _ body: (FakeStripeServer, StripePaymentProvider, Pauses) throws -> Void
    ) throws {
        let fake = try FakeStripeServer()
        defer { fake.stop() }
        var configuration = StripePaymentProvider.Configuration(secretKey: fake.secretKey)
        configuration.apiBase = fake.apiBase
        let pauses = Pauses()
        let provider = StripePaymentProvider(configuration: configuration) { duration in
            pauses.taken.withLock { $0.append(duration) }
        }
        try body(fake, provider, pauses)
    }

    @Test func createsAOneTimeSessionWithStripesFields() throws {
        try withStripe { fake, provider, _ in
            let redirect = try provider.startCheckout(CheckoutRequest.example(automaticTax: true))
            #expect(redirect.sessionId == "cs_test_fake1")
            #expect(redirect.url == "https://checkout.stripe.com/c/pay/cs_test_fake1")
            #expect(fake.sessionsCreated == 1)
            let received = try #require(fake.received.first)
            #expect(received.authorization == "Bearer \(fake.secretKey)")
            #expect(received.idempotencyKey == "linkout-checkout-intent-1")
            #expect(received.stripeVersion == "2026-09-30.endive")
            #expect(received.contentType == "application/x-www-form-urlencoded")
            let expected: [String: String] = [
                "mode": "payment",
                "client_reference_id": "chk_abc",
                "line_items[0][price_data][currency]": "eur",
                "line_items[0][price_data][unit_amount]": "2999",
                "line_items[0][price_data][product_data][name]": "Pro für immer & mehr",
                "line_items[0][quantity]": "1",
                "locale": "de",
                "success_url": "https://pay.example/return/chk_abc?session_id={CHECKOUT_SESSION_ID}",
                "cancel_url": "https://pay.example/checkout/chk_abc",
                "metadata[external_purchase_id]": "0000-epid",
                "metadata[bundle_id]": "com.example",
                "metadata[product_id]": "pro.lifetime",
                "metadata[checkout_id]": "chk_abc",
                "payment_intent_data[metadata][external_purchase_id]": "0000-epid",
                "payment_intent_data[metadata][bundle_id]": "com.example",
                "payment_intent_data[metadata][product_id]": "pro.lifetime",
                "payment_intent_data[metadata][checkout_id]": "chk_abc",
                "automatic_tax[enabled]": "true",
                "adaptive_pricing[enabled]": "false",
            ]
            #expect(received.fields == expected)
        }
    }

    @Test func createsASubscriptionSession() throws {
        try withStripe { fake, provider, _ in
            let request = CheckoutRequest.example(
                kind: .subscription(BillingInterval(.month, count: 3)),
                language: "pt-BR"
            )
            _ = try provider.startCheckout(request)
            let fields = try #require(fake.received.first).fields
            #expect(fields["mode"] == "subscription")
            #expect(fields["line_items[0][price_data][recurring][interval]"] == "month")
            #expect(fields["line_items[0][price_data][recurring][interval_count]"] == "3")
            #expect(fields["subscription_data[metadata][external_purchase_id]"] == "0000-epid")
            #expect(fields["subscription_data[metadata][product_id]"] == "pro.lifetime")
            #expect(!fields.keys.contains { $0.hasPrefix("payment_intent_data") })
            #expect(fields["automatic_tax[enabled]"] == nil)
            #expect(fields["adaptive_pricing[enabled]"] == "false")
            #expect(fields["locale"] == "pt-BR")
            #expect(fake.sessionsCreated == 1)
        }
    }

    @Test func retriesA500WithTheSameIdempotencyKeyAndCreatesOneSession() throws {
        try withStripe { fake, provider, pauses in
            fake.enqueue(.respond(status: 500))
            let redirect = try provider.startCheckout(CheckoutRequest.example())
            #expect(redirect.sessionId == "cs_test_fake1")
            #expect(fake.sessionsCreated == 1)
            let keys = fake.received.map(\.idempotencyKey)
            #expect(keys == ["linkout-checkout-intent-1", "linkout-checkout-intent-1"])
            #expect(fake.received.map(\.status) == [500, 200])
            #expect(fake.received[0].fields == fake.received[1].fields)
            #expect(pauses.count == 1)
        }
    }

    @Test func givesUpAfterTwoRetries() throws {
        try withStripe { fake, provider, pauses in
            fake.enqueue(.respond(status: 503), .respond(status: 502), .respond(status: 500))
            if let error = Self.failure({ () throws(PaymentError) in
                try provider.startCheckout(CheckoutRequest.example())
            }) {
                #expect(error.kind == .unavailable)
                #expect(error.status == 500)
            }
            #expect(fake.received.count == 3)
            #expect(Set(fake.received.map(\.idempotencyKey)).count == 1)
            #expect(pauses.count == 2)
            #expect(fake.sessionsCreated == 0)
        }
    }

    @Test func rateLimitIsUnavailableWithoutRetry() throws {
        try withStripe { fake, provider, pauses in
            fake.enqueue(.respond(status: 429))
            if let error = Self.failure({ () throws(PaymentError) in
                try provider.startCheckout(CheckoutRequest.example())
            }) {
                #expect(error.kind == .unavailable)
                #expect(error.status == 429)
            }
            #expect(fake.received.count == 1)
            #expect(pauses.count == 0)
            #expect(fake.sessionsCreated == 0)
        }
    }

    @Test func stripeShouldRetryDecidesFirst() throws {
        try withStripe { fake, provider, _ in
            fake.enqueue(.respond(status: 500, headers: ["Stripe-Should-Retry": "false"]))
            #expect(throws: PaymentError.self) { try provider.startCheckout(CheckoutRequest.example()) }
            #expect(fake.received.count == 1)
            fake.enqueue(.respond(status: 429, headers: ["Stripe-Should-Retry": "true"]))
            let redirect = try provider.startCheckout(CheckoutRequest.example(intent: "intent-2"))
            #expect(redirect.sessionId == "cs_test_fake1")
            #expect(fake.received.count == 3)
        }
    }

    @Test func aBadRequestIsRejectedWithStripesCode() throws {
        try withStripe { fake, provider, pauses in
            fake.enqueue(
                .respond(
                    status: 400,
                    body: #"{"error":{"type":"invalid_request_error","code":"parameter_invalid","message":"bad"}}"#
                )
            )
            if let error = Self.failure({ () throws(PaymentError) in
                try provider.startCheckout(CheckoutRequest.example())
            }) {
                #expect(error.kind == .rejected)
                #expect(error.providerCode == "parameter_invalid")
                #expect(error.message == "Stripe: bad")
            }
            #expect(pauses.count == 0)
        }
    }

    @Test func theSameIntentGetsTheSameSessionBack() throws {
        try withStripe { fake, provider, _ in
            let first = try provider.startCheckout(CheckoutRequest.example())
            let second = try provider.startCheckout(CheckoutRequest.example())
            #expect(first == second)
            #expect(fake.sessionsCreated == 1)
            #expect(
                try provider.startCheckout(CheckoutRequest.example(intent: "intent-2")).sessionId == "cs_test_fake2"
            )
        }
    }

    @Test func yenAndDinarAmountsUseStripesExponents() throws {
        try withStripe { fake, provider, _ in
            _ = try provider.startCheckout(CheckoutRequest.example(intent: "jpy", currency: "JPY", amount: "500"))
            _ = try provider.startCheckout(CheckoutRequest.example(intent: "kwd", currency: "KWD", amount: "5.12"))
            let amounts = fake.received.map { $0.fields["line_items[0][price_data][unit_amount]"] }
            let currencies = fake.received.map { $0.fields["line_items[0][price_data][currency]"] }
            #expect(amounts == ["500", "5120"])
            #expect(currencies == ["jpy", "kwd"])
        }
    }

    @Test func anUnchargeablePriceIsRejectedBeforeAnyCall() throws {
        try withStripe { fake, provider, _ in
            if let error = Self.failure({ () throws(PaymentError) in
                try provider.startCheckout(CheckoutRequest.example(currency: "KWD", amount: "5.124"))
            }) {
                #expect(error.kind == .rejected)
            }
            #expect(fake.received.isEmpty)
        }
    }

    @Test func theSecretKeyNeverAppearsInAnError() throws {
        let fake = try FakeStripeServer()
        defer { fake.stop() }
        let wrongKey = "sk_test_wrong_key_9f8e7d6c5b4a"
        var configuration = StripePaymentProvider.Configuration(secretKey: wrongKey)
        configuration.apiBase = fake.apiBase
        let provider = StripePaymentProvider(configuration: configuration) { _ in }
        if let error = Self.failure({ () throws(PaymentError) in try provider.startCheckout(CheckoutRequest.example()) }
        ) {
            #expect(error.kind == .rejected)
            #expect(error.status == 401)
            #expect(!"\(error)".contains(wrongKey))
            #expect(!error.message.contains("sk_test_"))
            #expect(error.message.contains("[redacted]"))
        }
        #expect(!"\(configuration)".contains(wrongKey))

        // Nothing listens on port 1 of the loopback: a refused connection, still without the key.
        var unreachable = StripePaymentProvider.Configuration(secretKey: wrongKey)
        unreachable.apiBase = "http://127.0.0.1:1"
        let offline = StripePaymentProvider(configuration: unreachable) { _ in }
        if let error = Self.failure({ () throws(PaymentError) in try offline.startCheckout(CheckoutRequest.example()) })
        {
            #expect(error.kind == .unavailable)
            #expect(!"\(error)".contains(wrongKey))
        }
    }

    @Test func noRetryStartsThatCouldNotFinishInTheTotalTime() throws {
        try withStripe { fake, _, _ in
            var configuration = StripePaymentProvider.Configuration(secretKey: fake.secretKey)
            configuration.apiBase = fake.apiBase
            configuration.attemptTimeout = .seconds(5)
            configuration.totalTimeout = .seconds(5)
            let provider = StripePaymentProvider(configuration: configuration) { _ in }
            fake.enqueue(.respond(status: 500))
            #expect(throws: PaymentError.self) { try provider.startCheckout(CheckoutRequest.example()) }
            #expect(fake.received.count == 1)
        }
    }
}

@Suite("StripeForm and StripeLocale")
struct StripeFormTests {
    @Test func encodesStripesNesting() {
        var form = StripeForm()
        form.add("mode", "payment")
        form.add(
            "line_items",
            .array([.object([.init("price_data", .object([.init("unit_amount", 2999)])), .init("quantity", 1)])])
        )
        form.add("automatic_tax", .object([.init("enabled", true)]))
        form.add("success_url", "https://x.example/r?a=1&b={CHECKOUT_SESSION_ID}")
        form.add("name", "Größe 1+1 ~ä")
        #expect(
            form.encoded
                == "mode=payment&line_items[0][price_data][unit_amount]=2999&line_items[0][quantity]=1"
                + "&automatic_tax[enabled]=true"
                + "&success_url=https%3A%2F%2Fx.example%2Fr%3Fa%3D1%26b%3D%7BCHECKOUT_SESSION_ID%7D"
                + "&name=Gr%C3%B6%C3%9Fe%201%2B1%20~%C3%A4"
        )
    }

    @Test(arguments: [
        ("de", "de"), ("de-AT", "de"), ("en", "en"), ("en-US", "en"), ("en-GB", "en-GB"), ("en_GB", "en-GB"),
        ("pt-BR", "pt-BR"), ("pt-PT", "pt"), ("es-MX", "es-419"), ("es-ES", "es"), ("fr-CA", "fr-CA"),
        ("zh-Hant-TW", "zh-TW"), ("zh-Hant", "zh-TW"), ("zh-Hans-CN", "zh"), ("no", "nb"), ("cy", "auto"),
        ("", "auto"), ("hi", "hi-IN"),
    ])
    func localeFollowsThePageLanguage(language: String, locale: String) {
        #expect(StripeLocale.forLanguage(language) == locale)
    }

    @Test func retryPolicyFollowsStripesSDKs() {
        #expect(StripeRetryPolicy.decide(status: 200, shouldRetry: nil) == .succeed)
        #expect(StripeRetryPolicy.decide(status: 500, shouldRetry: nil) == .retry)
        #expect(StripeRetryPolicy.decide(status: 409, shouldRetry: nil) == .retry)
        #expect(StripeRetryPolicy.decide(status: 429, shouldRetry: nil) == .fail(.unavailable))
        #expect(StripeRetryPolicy.decide(status: 400, shouldRetry: nil) == .fail(.rejected))
        #expect(StripeRetryPolicy.decide(status: 401, shouldRetry: nil) == .fail(.rejected))
        #expect(StripeRetryPolicy.decide(status: 503, shouldRetry: "false") == .fail(.unavailable))
        #expect(StripeRetryPolicy.decide(status: 400, shouldRetry: "true") == .retry)
        let policy = StripeRetryPolicy()
        #expect(policy.delay(beforeRetry: 1, random: 1) == .milliseconds(500))
        #expect(policy.delay(beforeRetry: 2, random: 1) == .seconds(1))
        #expect(policy.delay(beforeRetry: 5, random: 1) == .seconds(2))
        #expect(policy.delay(beforeRetry: 1, random: 0.5) == .milliseconds(250))
    }

    @Test func redactsSecretsFromAnyText() {
        #expect(
            PaymentError.redactingSecrets("Invalid API Key provided: sk_test_abc123; whsec_xyz, pk_test_ok")
                == "Invalid API Key provided: [redacted]; [redacted], pk_test_ok"
        )
        #expect(PaymentError(.rejected, "key sk_live_123").message == "key [redacted]")
    }
}
