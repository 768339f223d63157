import Crypto
import Domain
import TestSupport
import Testing

@testable import Payments

/// The provider plug-in: the registry by id, each provider made from the settings it declares, and what each
/// says about webhooks, stored events and money.
@Suite("Provider registry")
struct ProviderRegistryTests {
    static func stripeSettings(_ values: [String: String]) -> ProviderSettings {
        var settings = StripePaymentProvider.registration.emptySettings()
        settings.values = values
        return settings
    }

    /// The error making a provider throws, or nil when it is made.
    static func failure(_ registration: ProviderRegistration, _ settings: ProviderSettings)
        -> ProviderConfigurationError?
    {
        do {
            _ = try registration.make(settings, ProviderContext())
            return nil
        } catch {
            return error
        }
    }

    @Test func providersAreFoundByTheirOwnIds() {
        #expect(ProviderRegistry.all.map(\.id) == [.demo, .stripe, .paddle])
        #expect(Set(ProviderRegistry.all.map(\.id)).count == ProviderRegistry.all.count)
        #expect(ProviderRegistry.registration(ProviderID("stripe"))?.id == .stripe)
        #expect(ProviderRegistry.registration(ProviderID("paypal")) == nil)
        #expect(ProviderRegistry.names == "demo, stripe or paddle")
    }

    /// Session lifetimes and product limits are each provider's own: Stripe's Checkout Session lives 30 minutes
    /// to 24 hours and bills at least once in three years; the demo has no shortest session and sells any interval.
    @Test func sessionsAndProductsFollowTheProvidersOwnRules() {
        #expect(StripePaymentProvider.registration.sessionLifetime == Milliseconds.day)
        #expect(StripePaymentProvider.registration.shortestSession == 30 * Milliseconds.minute)
        #expect(DemoPaymentProvider.registration.shortestSession == 0)
        let stripe = StripePaymentProvider(configuration: .init(secretKey: "sk_test_x"))
        let demo = DemoPaymentProvider(publicURL: "", taxCountry: "DEU")
        let fourYears = CheckoutRequest.Product.Kind.subscription(BillingInterval(.year, count: 4))
        #expect(stripe.refusal(of: fourYears) != nil)
        #expect(stripe.refusal(of: .subscription(BillingInterval(.month, count: 36))) == nil)
        #expect(stripe.refusal(of: .oneTime) == nil)
        #expect(demo.refusal(of: fourYears) == nil)
    }

    @Test func stripeNamesWhatItLacks() {
        let stripe = StripePaymentProvider.registration
        let missingKey = Self.failure(stripe, Self.stripeSettings([:]))
        #expect(missingKey?.field == "payments.stripe.secretKey")
        #expect(
            missingKey?.problem
                == "is required with provider stripe (or LINKOUT_STRIPE_SECRET_KEY, or secretKeyFile)"
        )
        #expect(
            Self.failure(stripe, Self.stripeSettings(["secretKey": "sk_test_x"]))?.field
                == "payments.stripe.webhookSecret"
        )
        let complete = ["secretKey": "sk_test_x", "webhookSecret": "whsec_x"]
        #expect(Self.failure(stripe, Self.stripeSettings(complete)) == nil)
        for (key, value) in [
            ("apiBase", "ftp://x"), ("automaticTax", "yes"), ("webhookToleranceSeconds", "5"),
            ("secretKey", "pk_test_x"), ("secretKey", "pk_live_x"), ("secretKey", "garbage"), ("secretKey", "sk_x"),
        ] {
            let wrong = complete.merging([key: value]) { _, new in new }
            #expect(Self.failure(stripe, Self.stripeSettings(wrong))?.field == "payments.stripe.\(key)")
        }
    }

    @Test func stripeMoneyIsLiveOnlyWithALiveKey() throws {
        func provider(_ key: String, tax: Bool = false) throws -> any PaymentProvider {
            try StripePaymentProvider.registration.make(
                Self.stripeSettings(["secretKey": key, "webhookSecret": "whsec_x", "automaticTax": "\(tax)"]),
                ProviderContext()
            )
        }
        #expect(try provider("sk_live_1").mode == .live)
        #expect(try provider("rk_live_1").mode == .live)
        #expect(try provider("sk_test_1").mode == .test)
        #expect(try provider("rk_test_1").takesRealMoney == false)
        #expect(try provider("sk_live_1").pageTexts.checkoutNote == "checkout_provider_stripe")
        #expect(try provider("sk_live_1").pageTexts.completedTitle == "result_paid_title")
        #expect(try provider("sk_test_1").pageTexts.checkoutNote == "checkout_provider_stripe_test")
        #expect(try provider("sk_test_1").pageTexts.completedMessage == "result_test_message")
        #expect(try provider("sk_test_1", tax: true).pageTexts.taxNote == .added)
        #expect(try provider("sk_test_1").pageTexts.taxNote == .included)
    }

    @Test func stripeVerifiesThenReadsOnlyTheEnvelope() throws {
        var configuration = StripePaymentProvider.Configuration(secretKey: "sk_test_x")
        configuration.webhookSecret = "whsec_x"
        let stripe = StripePaymentProvider(configuration: configuration)
        let now: Int64 = 1_800_000_000_000
        let body = Array(#"{"id":"evt_1","type":"made.up","data":{}}"#.utf8)
        let header = TimestampedHMAC.stripe(secret: "whsec_x").header(body: body, timestamp: now / 1000)
        let envelope = try stripe.verifyWebhook(
            body: body,
            header: { $0 == "stripe-signature" ? header : nil },
            now: now
        )
        #expect(envelope == WebhookEnvelope(eventId: "evt_1", type: "made.up"))
        // Its time, when it has one, dates it (the close counts an event still waiting in its own month).
        let dated = Array(#"{"id":"evt_2","type":"charge.refunded","created":1799000000,"data":{}}"#.utf8)
        let datedHeader = TimestampedHMAC.stripe(secret: "whsec_x").header(body: dated, timestamp: now / 1000)
        let datedEnvelope = try stripe.verifyWebhook(
            body: dated,
            header: { $0 == "stripe-signature" ? datedHeader : nil },
            now: now
        )
        #expect(datedEnvelope.occurredAt == 1_799_000_000_000 && datedEnvelope.orderKey == nil)
        // A time Stripe could not have sent it at (years back, or ahead) dates it by its arrival.
        for created in ["1", "1790000000", "4102444800", "-5", "9223372036854775807", "-9223372036854775808"] {
            let odd = Array(#"{"id":"evt_3","type":"charge.refunded","created":\#(created),"data":{}}"#.utf8)
            let oddHeader = TimestampedHMAC.stripe(secret: "whsec_x").header(body: odd, timestamp: now / 1000)
            let envelope = try stripe.verifyWebhook(
                body: odd,
                header: { $0 == "stripe-signature" ? oddHeader : nil },
                now: now
            )
            #expect(envelope.occurredAt == nil, "\(created)")
        }
        #expect(throws: WebhookRefusal.signature("missing Stripe-Signature header")) {
            try stripe.verifyWebhook(body: body, header: { _ in nil }, now: now)
        }
        let notAnEvent = Array(#"{"type":"x"}"#.utf8)
        let signed = TimestampedHMAC.stripe(secret: "whsec_x").header(body: notAnEvent, timestamp: now / 1000)
        #expect(throws: WebhookRefusal.notAnEvent("the body is not a Stripe event")) {
            try stripe.verifyWebhook(body: notAnEvent, header: { _ in signed }, now: now)
        }
        // An id holding a NUL (or another hidden character) is no id: the ledger keys events by it, and two ids
        // that differ after a NUL were one event there.
        let nul = Array(#"{"id":"evt_z\u0000two","type":"charge.refunded","created":1,"data":{}}"#.utf8)
        let nulHeader = TimestampedHMAC.stripe(secret: "whsec_x").header(body: nul, timestamp: now / 1000)
        #expect(throws: WebhookRefusal.notAnEvent("the body is not a Stripe event")) {
            try stripe.verifyWebhook(body: nul, header: { _ in nulHeader }, now: now)
        }
        #expect(
            WebhookEnvelope.isKey("txn_01h15x024") && !WebhookEnvelope.isKey("evt\u{202E}")
                && !WebhookEnvelope.isKey("")
        )
        #expect(stripe.webhook?.maxBodyBytes == 256 * 1024)
        // A stored event decodes to PaymentEvent, live as Stripe says; nothing to add from the API.
        let decoded = try stripe.decodeEvent(Array(#"{"id":"e","type":"ping","created":1,"livemode":true}"#.utf8))
        #expect(decoded == ProviderEvent(payload: .ignored(type: "ping"), isLive: true))
        #expect(try stripe.resolve(decoded) == decoded)
    }

    @Test func theDemoDecodesTheEventsItsPageStores() throws {
        let demo = try DemoPaymentProvider.registration.make(
            DemoPaymentProvider.registration.emptySettings(),
            ProviderContext(defaultTaxCountry: "AUT")
        )
        #expect(demo.id == .demo)
        #expect(demo.mode == .simulated)
        #expect(demo.webhook == nil)
        #expect(demo.pageTexts.completedTitle == "result_demo_title")
        let request = CheckoutRequest.example(intent: "int_7", kind: .subscription(BillingInterval(.month)))
        let completed = DemoEvent(DemoEvent.completed, request: request, at: 1_800_000_000_000)
        #expect(completed.id == "demo_int_7_completed")
        let decoded = try demo.decodeEvent(try completed.body())
        #expect(decoded.isLive == false)
        guard case .purchaseCompleted(let completion) = decoded.payload else {
            Issue.record("not a completed purchase: \(decoded.payload)")
            return
        }
        #expect(completion.sessionId == "demo_int_7")
        #expect(completion.mode == .subscription)
        #expect(completion.amountTotal == 2999)
        #expect(completion.customerCountry == "AT")
        #expect(completion.completedAt == 1_800_000_000_000)
        let cancelled = DemoEvent(DemoEvent.cancelled, request: request, at: 1)
        #expect(cancelled.id == "demo_int_7_cancelled")
        #expect(
            try demo.decodeEvent(try cancelled.body()).payload
                == .sessionExpired(.init(sessionId: "demo_int_7", checkoutId: "chk_abc"))
        )
        #expect(throws: (any Error).self) { try demo.decodeEvent(Array("{}".utf8)) }
    }
}
