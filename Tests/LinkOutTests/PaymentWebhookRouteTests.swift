import Domain
import Foundation
import Lifecycle
import Payments
import Storage
import Synchronization
import TestSupport
import Testing

@testable import LinkOut

/// `POST /webhooks/{provider}`: the provider is found by id among those the server runs with, Stripe's
/// deliveries are answered exactly as they were at `/webhooks/stripe`, and the demo's page stores its answer as
/// an event that the processor acts on from storage.
@Suite("Payment webhook route")
struct PaymentWebhookRouteTests {
    static let event =
        #"{"id":"evt_route","object":"event","type":"checkout.session.expired","created":1,"livemode":false,"data":{"object":{"id":"cs_route","object":"checkout.session"}}}"#

    /// A signed Stripe delivery to `target`.
    static func deliver(_ harness: PaymentHarness, to target: String, event: String = event) throws
        -> RawClient.Response
    {
        let delivery = FakeStripeServer.signedDelivery(
            event: event,
            secret: PaymentHarness.webhookSecret,
            timestamp: Clock.system.nowSeconds()
        )
        return try harness.live.post(
            target,
            contentType: "application/json",
            body: String(decoding: delivery.body, as: UTF8.self),
            headers: ["Stripe-Signature": delivery.header]
        )
    }

    /// Only the head, declaring `length` bytes of body: the answer comes before any of it is sent.
    static func head(_ harness: PaymentHarness, _ target: String, length: Int) throws -> RawClient.Response {
        try harness.live.client().roundTrip(
            "POST \(target) HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\n\r\n"
        )
    }

    static func stored(_ harness: PaymentHarness) throws -> [StoredPaymentEvent] {
        try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 100)
    }

    @Test func anUnknownProviderOrOneThatIsNotRunningIsNotFoundAndNothingIsStored() throws {
        let harness = try PaymentHarness(provider: .stripe)
        for target in ["/webhooks/paypal", "/webhooks/demo", "/webhooks/Stripe"] {
            let response = try Self.deliver(harness, to: target)
            #expect(response.status == 404, "\(target)")
            // The JSON APIs' own 404, as for a path with no route at all.
            #expect(response.text.contains(#""code":"not_found""#), "\(target)")
            // Over Stripe's limit: still the 404 of a provider that is not there, before the body is sent.
            #expect(try Self.head(harness, target, length: 256 * 1024 + 1).status == 404, "\(target)")
        }
        #expect(try Self.stored(harness).isEmpty)
        #expect(try Self.deliver(harness, to: "/webhooks/stripe").status == 200)
        #expect(try Self.stored(harness).map(\.provider) == [.stripe])
        // Metrics name a registered provider's route, never a path someone made up.
        let metrics = { (try? harness.live.get("/metrics").text) ?? "" }
        #expect(eventually(within: 30) { metrics().contains(#"route="stripe_webhook",status="200""#) })
        #expect(!metrics().contains("paypal"))
    }

    @Test func theDemoTakesNoWebhooks() throws {
        let harness = try PaymentHarness(provider: .demo)
        for target in ["/webhooks/demo", "/webhooks/stripe"] {
            #expect(try Self.deliver(harness, to: target).status == 404, "\(target)")
            #expect(try Self.head(harness, target, length: 256 * 1024 + 1).status == 404, "\(target)")
        }
        #expect(try Self.stored(harness).isEmpty)
    }

    /// The answers `/webhooks/stripe` gave before it was one provider among others, status and body.
    @Test func stripeDeliveriesAreStillVerifiedAndAnsweredAsBefore() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let unsigned = try harness.live.post("/webhooks/stripe", contentType: "application/json", body: Self.event)
        #expect(unsigned.status == 400)
        #expect(unsigned.text.contains(#""code":"invalid_signature""#))
        #expect(unsigned.text.contains("The Stripe-Signature header does not verify."))
        let notAnEvent = try Self.deliver(harness, to: "/webhooks/stripe", event: #"{"object":"event"}"#)
        #expect(notAnEvent.status == 400)
        #expect(notAnEvent.text.contains(#""code":"invalid_event""#))
        #expect(notAnEvent.text.contains("The body is not a Stripe event."))
        let tooLarge = try Self.head(harness, "/webhooks/stripe", length: 256 * 1024 + 1)
        #expect(tooLarge.status == 413)
        #expect(tooLarge.text.contains(#""code":"body_too_large""#))
        #expect(tooLarge.text.contains("The body is larger than a Stripe event."))
        #expect(try Self.stored(harness).isEmpty)
        let accepted = try Self.deliver(harness, to: "/webhooks/stripe")
        #expect(accepted.status == 200)
        #expect(accepted.text.contains(#""received":true"#))
        #expect(try Self.deliver(harness, to: "/webhooks/stripe").status == 200)
        #expect(try Self.stored(harness).map(\.eventId) == ["evt_route"])
    }

    /// The demo's answer is a stored event, deduplicated and acted on like a webhook's: the purchase comes
    /// from the processor, and a second click stores nothing new.
    @Test func theDemoPageStoresItsEventFirst() throws {
        let harness = try PaymentHarness(provider: .demo)
        let checkout = try harness.openCheckout()
        let payment = try #require(
            try harness.choose(checkout, product: "pro.lifetime", currency: "EUR").header("Location")
        )
        let page = try harness.live.get(payment, headers: ["Cookie": checkout.cookie])
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        for _ in 0..<2 {
            let complete = try harness.live.post(
                payment,
                contentType: "application/x-www-form-urlencoded",
                body: "csrf=\(csrf)&action=complete",
                headers: ["Cookie": checkout.cookie]
            )
            #expect(complete.status == 303)
        }
        let intent = String(payment.dropFirst("/pay/demo/".count))
        let events = try Self.stored(harness)
        #expect(events.map(\.provider) == [.demo])
        #expect(events.map(\.eventId) == ["demo_\(intent)_completed"])
        #expect(events.map(\.type) == ["demo.payment.completed"])
        #expect(events.first?.processedAt != nil)
        #expect(events.first?.outcome?.hasPrefix("purchase recorded") == true)
        let purchases = try harness.live.application.ledger.payments.purchases(
            externalPurchaseId: ExternalPurchaseID(checkout.externalPurchaseId)
        )
        #expect(purchases.map(\.purchaseId) == ["demo_\(intent)"])
    }

    @Test func aCancelledDemoPaymentIsAStoredEventToo() throws {
        let harness = try PaymentHarness(provider: .demo)
        let checkout = try harness.openCheckout()
        let payment = try #require(
            try harness.choose(checkout, product: "pro.lifetime", currency: "EUR").header("Location")
        )
        let page = try harness.live.get(payment, headers: ["Cookie": checkout.cookie])
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        let cancel = try harness.live.post(
            payment,
            contentType: "application/x-www-form-urlencoded",
            body: "csrf=\(csrf)&action=cancel",
            headers: ["Cookie": checkout.cookie]
        )
        #expect(cancel.status == 303)
        #expect(cancel.header("Location") == checkout.path)
        let intent = String(payment.dropFirst("/pay/demo/".count))
        let events = try Self.stored(harness)
        #expect(events.map(\.eventId) == ["demo_\(intent)_cancelled"])
        #expect(events.first?.processedAt != nil)
        let session = try harness.live.application.ledger.payments.paymentSession(intentId: intent)
        #expect(session?.state == .expired)
        #expect(
            try harness.live.application.ledger.payments.purchases(
                externalPurchaseId: ExternalPurchaseID(checkout.externalPurchaseId)
            )
            .isEmpty
        )
    }

    /// Cancel and complete posted at once for one payment: one of them decides, and every answer leads where that
    /// decision does (a cancel taken back to the checkout while the purchase was paid invited a second one).
    @Test func cancelAndCompleteAtOnceAgreeOnOneOutcome() throws {
        let harness = try PaymentHarness(provider: .demo)
        let checkout = try harness.openCheckout()
        let payment = try #require(
            try harness.choose(checkout, product: "pro.lifetime", currency: "EUR").header("Location")
        )
        let page = try harness.live.get(payment, headers: ["Cookie": checkout.cookie])
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        let answers = Mutex<[(action: String, location: String)]>([])
        let port = harness.live.port
        let cookie = checkout.cookie
        DispatchQueue.concurrentPerform(iterations: 12) { index in
            let action = index.isMultiple(of: 2) ? "cancel" : "complete"
            let body = "csrf=\(csrf)&action=\(action)"
            let request =
                "POST \(payment) HTTP/1.1\r\nHost: t\r\nCookie: \(cookie)\r\n"
                + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            let answer = try? RawClient(port: port).roundTrip(request)
            answers.withLock { $0.append((action, answer?.header("Location") ?? "status \(answer?.status ?? 0)")) }
        }
        try harness.waitForEvents()
        let purchases = try harness.live.application.ledger.payments.purchases(
            externalPurchaseId: ExternalPurchaseID(checkout.externalPurchaseId)
        )
        let all = answers.withLock { $0 }
        #expect(all.count == 12)
        // Paid: no answer sends the person back to pay again. Cancelled: nothing was bought, and the session is
        // over (a post after it lands on its result, which says so).
        let backToCheckout = all.filter { $0.location == checkout.path }
        let intent = String(payment.dropFirst("/pay/demo/".count))
        let session = try harness.live.application.ledger.payments.paymentSession(intentId: intent)
        if purchases.isEmpty {
            #expect(session?.state == .expired)
            #expect(!backToCheckout.isEmpty, "\(all)")
        } else {
            #expect(purchases.count == 1)
            #expect(backToCheckout.isEmpty, "\(all)")
        }
    }
}
