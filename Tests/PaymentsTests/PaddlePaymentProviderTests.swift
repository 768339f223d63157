import Domain
import Foundation
import Lifecycle
import TestSupport
import Testing

@testable import Payments

/// Paddle transactions through the real libcurl client against `FakePaddleServer` (Paddle API reference: Transactions).
@Suite("PaddlePaymentProvider")
struct PaddlePaymentProviderTests {
    func request(intent: String = "int_1", kind: CheckoutRequest.Product.Kind = .oneTime) -> CheckoutRequest {
        CheckoutRequest(
            intentId: intent,
            checkoutId: "chk_1",
            externalPurchaseId: "SANDBOX-epid",
            bundleId: "com.example",
            product: CheckoutRequest.Product(id: "pro.lifetime", displayName: "Pro", kind: kind),
            price: CheckoutRequest.Price(currency: "usd", amount: "9.99"),
            language: "en",
            successURL: "https://linkout.example/done",
            cancelURL: "https://linkout.example/checkout/chk_1"
        )
    }

    func provider(_ fake: FakePaddleServer, priceIds: [String: String] = [:]) -> PaddlePaymentProvider {
        PaddlePaymentProvider(
            api: PaddleAPI(
                configuration: PaddleConfiguration(
                    apiKey: fake.apiKey,
                    apiBase: fake.apiBase,
                    checkoutURL: "https://sandbox-pay.paddle.io/hsc_01fake",
                    priceIds: priceIds
                )
            ),
            signature: .paddle(secret: "pdl_ntfset_test")
        )
    }

    /// A catalog currency Paddle does not sell in is named for `linkout check` (it made a transaction Paddle
    /// could never take, and a retry page for good); the start is not refused for it.
    @Test func theCurrenciesPaddleDoesNotSellInAreNamed() throws {
        let fake = try FakePaddleServer()
        defer { fake.stop() }
        let paddle = provider(fake)
        #expect(paddle.unsoldCurrencies(["KWD", "eur", "JPY", "BHD"]) == ["BHD", "KWD"])
        #expect(paddle.refusal(ofPrice: .init(currency: "KWD", amount: "5.120")) == nil)
    }

    @Test func aNonCatalogPriceWithLinkoutsIdsGoesToTheHostedCheckout() throws {
        let fake = try FakePaddleServer()
        defer { fake.stop() }
        let redirect = try provider(fake).startCheckout(request(kind: .subscription(BillingInterval(.month))))
        #expect(redirect.sessionId == "txn_01fake1")
        #expect(redirect.url == "https://sandbox-pay.paddle.io/hsc_01fake?transaction_id=txn_01fake1")
        let made = try #require(fake.transactions.first)
        #expect(made.body == ["currency_code": "USD", "amount": "999", "billing_cycle": "1 month"])
        #expect(
            made.customData == [
                "linkout_checkout_id": "chk_1", "linkout_intent_id": "int_1", "external_purchase_id": "SANDBOX-epid",
                "bundle_id": "com.example", "product_id": "pro.lifetime",
            ]
        )
    }

    @Test func aCatalogPriceIsNamedByItsId() throws {
        let fake = try FakePaddleServer()
        defer { fake.stop() }
        _ = try provider(fake, priceIds: ["pro.lifetime": "pri_01life"]).startCheckout(request())
        #expect(fake.transactions.first?.body == ["currency_code": "USD", "price_id": "pri_01life"])
    }

    /// Paddle's rate limiter and an outage before the work: the person sees a retry page, and the next press
    /// makes the one transaction.
    @Test func a429OrA5xxIsUnavailableAndMakesNothing() throws {
        let fake = try FakePaddleServer()
        defer { fake.stop() }
        fake.enqueue(.respond(status: 429), .respond(status: 503))
        let paddle = provider(fake)
        for expected in [429, 503] {
            #expect(
                throws: PaymentError(
                    .unavailable,
                    "Paddle: scripted \(expected)",
                    status: expected,
                    providerCode: "scripted"
                )
            ) {
                try paddle.startCheckout(request())
            }
        }
        #expect(fake.transactions.isEmpty)
        #expect(try paddle.startCheckout(request()).sessionId == "txn_01fake1")
        #expect(fake.transactions.count == 1)
    }

    /// Paddle made the transaction but the answer was lost: the next press for the same intent finds it by the
    /// intent id in its custom data instead of making a second one.
    @Test func aLostAnswerIsFoundAgainNotMadeTwice() throws {
        let fake = try FakePaddleServer()
        defer { fake.stop() }
        fake.enqueue(.createThenRespond(status: 500))
        let paddle = provider(fake)
        #expect(throws: PaymentError.self) { try paddle.startCheckout(request()) }
        #expect(fake.transactions.count == 1)
        let again = try paddle.startCheckout(request())
        #expect(again.sessionId == "txn_01fake1")
        #expect(fake.transactions.count == 1)
        #expect(fake.requests.filter { $0.hasPrefix("POST") }.count == 1)
        // Another intent is not confused with it.
        #expect(try paddle.startCheckout(request(intent: "int_2")).sessionId == "txn_01fake2")
    }

    /// The registration hands the provider the server's clock: a lost answer is looked for from that clock's
    /// time (less a minute), so with the clock a day ahead the transaction Paddle made is out of the search.
    @Test func theRegisteredProviderReadsTheInjectedClock() throws {
        let fake = try FakePaddleServer()
        defer { fake.stop() }
        fake.enqueue(.createThenRespond(status: 500))
        let registration = PaddlePaymentProvider.registration
        var settings = registration.emptySettings()
        settings["apiKey"] = fake.apiKey
        settings["apiBase"] = fake.apiBase
        settings["checkoutURL"] = "https://sandbox-pay.paddle.io/hsc_01fake"
        settings["webhookSecret"] = "pdl_ntfset_test"
        let dayAhead = ManualClock(startingAt: Clock.system.nowMilliseconds() + 86_400_000)
        let paddle = try registration.make(settings, ProviderContext(clock: dayAhead.clock))
        #expect(throws: PaymentError.self) { try paddle.startCheckout(request()) }
        #expect(try paddle.startCheckout(request()).sessionId == "txn_01fake2")
        #expect(fake.transactions.count == 2)
    }

    /// The fake echoes the `Authorization` header it refused: masked, a key of Paddle's older form (50
    /// characters, no `pdl_` to be known by) as well as a current one.
    @Test(arguments: ["pdl_sdbx_apikey_01wrong_secretpart", "a1b2c3d4e5f6a7b8c9d0secretpart11223344556677889900"])
    func aRefusedKeyIsRejectedAndNeverEchoed(key: String) throws {
        let fake = try FakePaddleServer()
        defer { fake.stop() }
        let paddle = PaddlePaymentProvider(
            api: PaddleAPI(
                configuration: PaddleConfiguration(
                    apiKey: key,
                    apiBase: fake.apiBase,
                    checkoutURL: "https://sandbox-pay.paddle.io/hsc_01fake"
                )
            ),
            signature: .paddle(secret: "pdl_ntfset_test")
        )
        do {
            _ = try paddle.startCheckout(request())
            Issue.record("a wrong key started a checkout")
        } catch {
            #expect(error.kind == .rejected)
            #expect(error.status == 403)
            #expect(!error.description.contains("secretpart"), "\(error.description)")
            #expect(error.description.contains("with Bearer [redacted]"), "\(error.description)")
        }
    }

    /// The country comes from the transaction's address, read in the background (notifications lack it).
    @Test func resolvingAPurchaseReadsTheCountryFromTheAddress() throws {
        let fake = try FakePaddleServer()
        defer { fake.stop() }
        fake.setCountry("GB")
        let paddle = provider(fake)
        let id = try paddle.startCheckout(request()).sessionId
        let body = PaddleFixtures.transaction(
            eventId: "evt_01",
            occurredAt: "2026-05-02T10:18:49Z",
            transactionId: id,
            totals: .init(subtotal: 999, tax: 0, total: 999),
            customData: ["linkout_checkout_id": "chk_1"]
        )
        let resolved = try paddle.resolve(try paddle.decodeEvent(Array(body.utf8)))
        guard case .purchaseCompleted(let completion) = resolved.payload else {
            Issue.record("not a purchase")
            return
        }
        #expect(completion.customerCountry == "GB")
        #expect(fake.requests.last == "GET /transactions/\(id)?include=address")
    }

    @Test func theKeyDecidesLiveOrSandbox() {
        #expect(PaddleConfiguration.defaultAPIBase(forKey: "pdl_sdbx_apikey_01x_y") == "https://sandbox-api.paddle.com")
        #expect(PaddleConfiguration.defaultAPIBase(forKey: "pdl_live_apikey_01x_y") == "https://api.paddle.com")
        let sandbox = PaddleConfiguration(apiKey: "pdl_sdbx_apikey_01x_y", checkoutURL: "https://x.example")
        #expect(!sandbox.takesRealMoney)
        #expect(!sandbox.description.contains("pdl_sdbx"))
    }

    @Test func theRegistrationNamesEveryMissingKey() {
        let registration = PaddlePaymentProvider.registration
        var settings = registration.emptySettings()
        #expect(throws: ProviderConfigurationError.self) { try registration.make(settings, ProviderContext()) }
        settings["apiKey"] = "pdl_sdbx_apikey_01x_y"
        do {
            _ = try registration.make(settings, ProviderContext())
        } catch {
            #expect(error.field == "payments.paddle.checkoutURL")
        }
        // A hosted checkout the payment page rule would refuse at every payment is refused at start-up.
        for refused in ["http://sandbox-pay.paddle.io/hsc_01fake", "https://sandbox-pay.paddle.io/hsc 01", "/checkout"]
        {
            settings["checkoutURL"] = refused
            do {
                _ = try registration.make(settings, ProviderContext())
                Issue.record("\(refused) was taken")
            } catch {
                #expect(error.field == "payments.paddle.checkoutURL", "\(refused)")
            }
        }
        settings["checkoutURL"] = "https://sandbox-pay.paddle.io/hsc_01fake"
        do {
            _ = try registration.make(settings, ProviderContext())
        } catch {
            #expect(error.description.contains("payments.paddle.webhookSecret"))
            #expect(error.description.contains("LINKOUT_PADDLE_WEBHOOK_SECRET"))
        }
        settings["webhookSecret"] = "pdl_ntfset_x"
        settings["priceIds.pro.monthly"] = "pri_01a"
        let made = try? registration.make(settings, ProviderContext())
        #expect(made?.mode == .test)
        #expect((made as? PaddlePaymentProvider)?.configuration.priceIds == ["pro.monthly": "pri_01a"])
        settings["priceIds.pro.lifetime"] = "price_1"
        #expect(throws: ProviderConfigurationError.self) { try registration.make(settings, ProviderContext()) }
    }
}
