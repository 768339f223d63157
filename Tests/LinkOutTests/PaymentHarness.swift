import Crypto
import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// The whole server with a payment provider and reporting on: a fake Stripe (sessions through the real libcurl
/// client) and a fake Apple (reports), both on 127.0.0.1, stopped with the harness.
final class PaymentHarness {
    static let webhookSecret = "whsec_test_linkout_0123456789"
    let apple: LiveReportingTests.Setup
    let stripe: FakeStripeServer
    let live: LiveApplication

    /// `clock`: the server's time (a `ManualClock` moves it).
    init(
        provider: ProviderID,
        clock: Clock = .system,
        configure: (inout Configuration) -> Void = { _ in }
    ) throws {
        let apple = try LiveReportingTests.Setup()
        let stripe = try FakeStripeServer()
        self.apple = apple
        self.stripe = stripe
        live = try LiveApplication(clock: clock) { configuration in
            // Reports only when the tests tick: no NO_LINE_ITEM races with the purchases under test.
            apple.configure(&configuration, grace: 86_400)
            configuration.reporting.pollIntervalSeconds = 3600
            configuration.payments.provider = provider
            configuration.payments[.stripe, "secretKey"] = stripe.secretKey
            configuration.payments[.stripe, "webhookSecret"] = Self.webhookSecret
            configuration.payments[.stripe, "apiBase"] = stripe.apiBase
            configure(&configuration)
        }
        // The pass at start-up must be over before a test's first landing: on a database without a journal the
        // token is in the tables at once, and that pass could report it before the test opens its payment.
        try #require(live.firstReportingPassIsOver())
    }

    deinit {
        stripe.stop()
    }

    /// A StoreKit landing with a fresh token, then the checkout page: its path, session cookie and CSRF token.
    /// Sandbox by default: Stripe's test mode and the demo provider take no money, so only a sandbox token's
    /// purchases are reported to Apple.
    /// `expiresIn`: a custom-link token (`SERVICES`) that expires this many seconds from now.
    func openCheckout(sandbox: Bool = true, expiresIn: Int64? = nil) throws -> Checkout {
        let now = Clock.system.nowMilliseconds()
        var token = TokenMinter.mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: sandbox,
            tokenType: expiresIn == nil ? nil : "SERVICES",
            nowMilliseconds: now
        )
        if let expiresIn { token.tokenExpirationDate = now + expiresIn * 1000 }
        return try openCheckout(token: token)
    }

    /// A StoreKit landing with `token`, then the checkout page.
    func openCheckout(token: ExternalPurchaseToken) throws -> Checkout {
        let landing = try live.get("/?externalPurchaseToken=\(TokenMinter.encode(token))&bundleId=com.example")
        let location = try #require(landing.header("Location"))
        let cookie = try #require(landing.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let page = try live.get(location, headers: ["Cookie": cookie])
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        return Checkout(
            path: location,
            id: String(location.dropFirst("/checkout/".count)),
            cookie: cookie,
            csrf: String(csrf),
            externalPurchaseId: token.externalPurchaseId.rawValue
        )
    }

    struct Checkout {
        var path: String
        var id: String
        var cookie: String
        var csrf: String
        var externalPurchaseId: String
    }

    func choose(_ checkout: Checkout, product: String, currency: String) throws -> RawClient.Response {
        try live.post(
            checkout.path,
            contentType: "application/x-www-form-urlencoded",
            body: "csrf=\(checkout.csrf)&currency=\(currency)&product=\(product)",
            headers: ["Cookie": checkout.cookie]
        )
    }

    /// The app forwards `token` with `POST /v1/tokens`, naming the customer's `appAccountToken`.
    func forward(_ token: ExternalPurchaseToken, account: String) throws -> RawClient.Response {
        try live.post(
            "/v1/tokens",
            contentType: "application/json",
            body: #"{"token": "\#(TokenMinter.encode(token))", "appAccountToken": "\#(account)"}"#
        )
    }

    /// Posts a signed Stripe event, as Stripe delivers it.
    func deliver(_ event: String, secret: String = webhookSecret, timestamp: Int64? = nil) throws -> RawClient.Response
    {
        let delivery = FakeStripeServer.signedDelivery(
            event: event,
            secret: secret,
            timestamp: timestamp ?? Clock.system.nowSeconds()
        )
        return try live.post(
            "/webhooks/stripe",
            contentType: "application/json",
            body: String(decoding: delivery.body, as: UTF8.self),
            headers: ["Stripe-Signature": delivery.header]
        )
    }

    /// Waits (bounded) until every stored payment event has been acted on.
    func waitForEvents(seconds: Double = 30) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while try !live.application.ledger.payments.paymentEvents(unprocessedOnly: true, limit: 1).isEmpty {
            guard Date() < deadline else {
                Issue.record("payment events still unprocessed after \(seconds) s")
                return
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// A Stripe sale of `pro.lifetime` for EUR 29.99 on a fresh sandbox checkout (`cs_test_fake1`, paid by `pi_1`),
    /// its event acted on.
    func paidLifetime(tax: Int64, country: String) throws -> Checkout {
        let checkout = try openCheckout()
        #expect(try choose(checkout, product: "pro.lifetime", currency: "EUR").status == 303)
        let completed = StripeEvents.sessionCompleted(
            id: "evt_completed",
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.lifetime",
            total: 2999,
            tax: tax,
            country: country,
            paymentIntent: "pi_1"
        )
        #expect(try deliver(completed).status == 200)
        try waitForEvents()
        return checkout
    }

    /// Where the subscription started on `token` has its first period end (UNIX seconds), as recorded: a renewal's
    /// period starts there.
    func firstPeriodEnd(on token: String) throws -> Int64 {
        let items = try live.application.ledger.reports.lineItems(for: ExternalPurchaseID(token))
        let body = try #require(items.first?.body)
        let item = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        return try #require(item["subscriptionEndDate"] as? Int64) / 1000
    }

    /// Runs reporting passes until nothing is due, then returns every line item Apple received, in order. The
    /// server's own pass, woken by a payment, may hold a report of the token a moment (one open report per
    /// token), so passes go on until none is pending and a pass sends nothing more (bounded; polling, not a
    /// race guard). A minute: alone this takes well under a second, but in the PostgreSQL pass a hundred live
    /// servers share two cores, and 20 s was once not enough.
    func reportedLineItems() -> [[String: Any]] {
        let ledger = live.application.ledger
        var sent = -1
        _ = eventually(within: 60) {
            live.application.reporting.tick()
            // A send that failed (a timeout, under a loaded machine's tests) is retried after a backoff on the
            // server's clock, which a test's ManualClock does not reach by itself: it is taken at its moment.
            if let next = try? ledger.reports.reports(limit: 100, state: .pending).map(\.nextAttemptAt).min() {
                live.application.reporting.tick(now: next)
            }
            let count = apple.apple.received.count
            defer { sent = count }
            return count == sent && (try? ledger.reports.reports(limit: 1, state: .pending).isEmpty) == true
        }
        return apple.apple.received.flatMap { request -> [[String: Any]] in
            (request.bodyObject?["lineItems"] as? [[String: Any]]) ?? []
        }
    }

    /// A line item as sorted JSON text with `creationDate` (and any other `zeroing` fields, dates that depend on
    /// when the test runs) set to 0, for exact comparison.
    static func canonical(_ item: [String: Any], zeroing: [String] = []) throws -> String {
        var item = item
        for field in ["creationDate"] + zeroing where item[field] != nil { item[field] = 0 }
        let data = try JSONSerialization.data(withJSONObject: item, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}

/// Stripe event bodies as Stripe sends them (API version basil and later), for the events linkout acts on.
enum StripeEvents {
    static func sessionCompleted(
        id: String,
        session: String,
        checkout: PaymentHarness.Checkout,
        product: String,
        mode: String = "payment",
        currency: String = "eur",
        total: Int64,
        tax: Int64,
        country: String,
        paymentIntent: String? = nil,
        subscription: String? = nil,
        created: Int64 = Clock.system.nowSeconds()
    ) -> String {
        """
        {"id":"\(id)","object":"event","api_version":"2026-09-30.endive","created":\(created),\
        "livemode":false,"type":"checkout.session.completed","data":{"object":{"id":"\(session)",\
        "object":"checkout.session","client_reference_id":"\(checkout.id)","mode":"\(mode)",\
        "payment_status":"paid","status":"complete","currency":"\(currency)","amount_subtotal":\(total),\
        "amount_total":\(total),"total_details":{"amount_discount":0,"amount_shipping":0,"amount_tax":\(tax)},\
        "customer_details":{"address":{"country":"\(country)"}},"metadata":{"external_purchase_id":\
        "\(checkout.externalPurchaseId)","bundle_id":"com.example","product_id":"\(product)"},\
        "payment_intent":\(paymentIntent.map { "\"\($0)\"" } ?? "null"),\
        "subscription":\(subscription.map { "\"\($0)\"" } ?? "null"),"invoice":null}}}
        """
    }

    /// `created`: when Stripe made the event (UNIX seconds), the renewal's date; now by default.
    static func renewal(
        id: String,
        invoice: String,
        subscription: String,
        total: Int64,
        start: Int64,
        end: Int64,
        created: Int64 = Clock.system.nowSeconds(),
        currency: String = "eur",
        paymentIntent: String? = nil
    ) -> String {
        """
        {"id":"\(id)","object":"event","api_version":"2026-09-30.endive","created":\(created),\
        "livemode":false,"type":"invoice.paid","data":{"object":{"id":"\(invoice)","object":"invoice",\
        "billing_reason":"subscription_cycle","currency":"\(currency)",\
        "payment_intent":\(paymentIntent.map { "\"\($0)\"" } ?? "null"),"amount_paid":\(total),"total":\(total),\
        "total_excluding_tax":\(total),"total_taxes":[],"customer_address":{"country":"DE"},\
        "parent":{"type":"subscription_details","subscription_details":{"subscription":"\(subscription)",\
        "metadata":{}}},"lines":{"data":[{"id":"il_1","period":{"start":\(start),"end":\(end)}}]}}}}
        """
    }

    static func refunded(
        id: String,
        charge: String,
        paymentIntent: String,
        amount: Int64,
        refunded: Int64,
        created: Int64 = Clock.system.nowSeconds(),
        currency: String = "eur"
    ) -> String {
        """
        {"id":"\(id)","object":"event","api_version":"2026-09-30.endive","created":\(created),\
        "livemode":false,"type":"charge.refunded","data":{"object":{"id":"\(charge)","object":"charge",\
        "payment_intent":"\(paymentIntent)","amount":\(amount),"amount_refunded":\(refunded),\
        "currency":"\(currency)",\
        "refunded":\(refunded == amount),"metadata":{}}}}
        """
    }
}

extension PaymentHarness {
    /// The customer the custom-link tests follow across tokens.
    static let account = "7e3fb20b-4cdb-47cc-936d-99d65f608138"

    /// A sandbox `SERVICES` custom-link token of the example app, created and expiring when the test says.
    static func servicesToken(createdAt: Int64, expiresAt: Int64) -> ExternalPurchaseToken {
        var token = TokenMinter.mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: true,
            tokenType: "SERVICES",
            nowMilliseconds: createdAt
        )
        token.tokenExpirationDate = expiresAt
        return token
    }
}
