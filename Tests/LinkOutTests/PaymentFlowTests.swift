import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// The money loop end to end: checkout → provider → purchase → Apple line item → the exact report body a fake
/// Apple receives.
@Suite("Payments")
struct PaymentFlowTests {
    @Test func aDemoPaymentEndsInOneLineItemReport() throws {
        let harness = try PaymentHarness(provider: .demo)
        let checkout = try harness.openCheckout()
        let chosen = try harness.choose(checkout, product: "pro.lifetime", currency: "EUR")
        #expect(chosen.status == 303)
        let payment = try #require(chosen.header("Location"))
        #expect(payment.hasPrefix("/pay/demo/"))
        let page = try harness.live.get(payment, headers: ["Cookie": checkout.cookie])
        #expect(page.status == 200)
        #expect(page.text.contains("nothing is charged"))
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        let complete = try harness.live.post(
            payment,
            contentType: "application/x-www-form-urlencoded",
            body: "csrf=\(csrf)&action=complete",
            headers: ["Cookie": checkout.cookie]
        )
        #expect(complete.status == 303)
        let result = try harness.live.get(
            try #require(complete.header("Location")),
            headers: ["Cookie": checkout.cookie]
        )
        // The demo says it is one: no "Payment received" for money that never moved.
        #expect(result.text.contains("Demo payment completed"))
        #expect(!result.text.contains("Payment received"))
        #expect(result.text.contains("nothing was charged"))
        #expect(result.text.contains("https://example.com/open"))
        // A second click on the completed payment records nothing more.
        let twice = try harness.live.post(
            payment,
            contentType: "application/x-www-form-urlencoded",
            body: "csrf=\(csrf)&action=complete",
            headers: ["Cookie": checkout.cookie]
        )
        #expect(twice.status == 303)
        // A form of neither button is refused, before or after the payment completed.
        let neither = try harness.live.post(
            payment,
            contentType: "application/x-www-form-urlencoded",
            body: "csrf=\(csrf)&action=steal",
            headers: ["Cookie": checkout.cookie]
        )
        #expect(neither.status == 400)
        let intent = String(payment.dropFirst("/pay/demo/".count))
        let items = harness.reportedLineItems()
        #expect(items.count == 1)
        let expected =
            #"{"amountTaxExclusive":29990,"amountTaxInclusive":29990,"creationDate":0,"eventType":"BUY","lineItemId":"demo_\#(intent)","netAmountTaxExclusive":29990,"pricingCurrency":"EUR","productIdentifier":"pro.lifetime","productType":"ONE_TIME_BUY","quantity":1,"reportingCurrency":"EUR","taxAmount":0,"taxCountry":"DEU"}"#
        #expect(try items.map { try PaymentHarness.canonical($0) } == [expected])
        let report = try #require(harness.apple.apple.received.first?.bodyObject)
        #expect(report["status"] as? String == "LINE_ITEM")
        #expect(report["externalPurchaseId"] as? String == checkout.externalPurchaseId)
        #expect(
            try harness.live.application.ledger.payments.purchases(
                externalPurchaseId: ExternalPurchaseID(checkout.externalPurchaseId)
            )
            .count == 1
        )
    }

    @Test func aStripePurchaseDeliveredThreeTimesIsReportedOnceThenRefundedTwice() throws {
        let receiver = try WebhookReceiver(secret: "hook-secret")
        defer { receiver.stop() }
        let harness = try PaymentHarness(provider: .stripe) {
            $0.webhooks.url = receiver.url
            $0.webhooks.secret = "hook-secret"
        }
        let checkout = try harness.openCheckout()
        let chosen = try harness.choose(checkout, product: "pro.lifetime", currency: "EUR")
        #expect(chosen.status == 303)
        #expect(chosen.header("Location") == "https://checkout.stripe.com/c/pay/cs_test_fake1")
        let sent = try #require(harness.stripe.received.first)
        #expect(sent.fields["client_reference_id"] == checkout.id)
        #expect(sent.fields["metadata[external_purchase_id]"] == checkout.externalPurchaseId)
        #expect(sent.fields["mode"] == "payment")
        #expect(sent.fields["line_items[0][price_data][currency]"] == "eur")
        #expect(sent.fields["line_items[0][price_data][unit_amount]"] == "2999")
        #expect(sent.idempotencyKey?.isEmpty == false)
        // Back from Stripe before the webhook: the page says the payment is being confirmed, not that it is paid.
        let early = try harness.live.get("/checkout/\(checkout.id)/done?session_id=cs_test_fake1")
        #expect(early.text.contains("Confirming your payment"))
        // The event names another token: linkout keeps the sale on the token whose checkout started the session.
        var misdirected = checkout
        misdirected.externalPurchaseId = "SANDBOX_someone-else"
        let completed = StripeEvents.sessionCompleted(
            id: "evt_completed",
            session: "cs_test_fake1",
            checkout: misdirected,
            product: "pro.lifetime",
            total: 2999,
            tax: 479,
            country: "ES",
            paymentIntent: "pi_1"
        )
        for _ in 0..<3 { #expect(try harness.deliver(completed).status == 200) }
        try harness.waitForEvents()
        let paid = try harness.live.get("/checkout/\(checkout.id)/done?session_id=cs_test_fake1")
        // A test key takes no money, and the page says so instead of "Payment received".
        #expect(paid.text.contains("Test payment completed"))
        #expect(!paid.text.contains("Payment received"))
        #expect(
            try harness.deliver(
                StripeEvents.refunded(id: "evt_r1", charge: "ch_1", paymentIntent: "pi_1", amount: 2999, refunded: 1000)
            ).status == 200
        )
        #expect(
            try harness.deliver(
                StripeEvents.refunded(id: "evt_r2", charge: "ch_1", paymentIntent: "pi_1", amount: 2999, refunded: 2999)
            ).status == 200
        )
        try harness.waitForEvents()
        let items = try harness.reportedLineItems().map { try PaymentHarness.canonical($0) }
        #expect(
            items == [
                #"{"amountTaxExclusive":25200,"amountTaxInclusive":29990,"creationDate":0,"eventType":"BUY","lineItemId":"cs_test_fake1","netAmountTaxExclusive":25200,"pricingCurrency":"EUR","productIdentifier":"pro.lifetime","productType":"ONE_TIME_BUY","quantity":1,"reportingCurrency":"EUR","taxAmount":4790,"taxCountry":"ESP"}"#,
                #"{"amountTaxExclusive":8403,"amountTaxInclusive":10000,"creationDate":0,"eventType":"REFUND","lineItemId":"ch_1:refund:1000","netAmountTaxExclusive":16797,"pricingCurrency":"EUR","referenceLineItemId":"cs_test_fake1","reportingCurrency":"EUR","taxAmount":1597,"taxCountry":"ESP"}"#,
                #"{"amountTaxExclusive":16797,"amountTaxInclusive":19990,"creationDate":0,"eventType":"REFUND","lineItemId":"ch_1:refund:2999","netAmountTaxExclusive":0,"pricingCurrency":"EUR","referenceLineItemId":"cs_test_fake1","reportingCurrency":"EUR","taxAmount":3193,"taxCountry":"ESP"}"#,
            ]
        )
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
        let purchase = try #require(try harness.live.application.ledger.payments.purchase(id: "cs_test_fake1"))
        #expect(purchase.status == .refunded)
        // The same session completed again under another event id (Stripe's `async_payment_succeeded`, a replay):
        // nothing changes. It used to set the refunded purchase back to paid, and sign its entitlement anew.
        let again = completed.replacingOccurrences(of: "evt_completed", with: "evt_completed_again")
        #expect(try harness.deliver(again).status == 200)
        try harness.waitForEvents()
        #expect(try harness.live.application.ledger.payments.purchase(id: "cs_test_fake1")?.status == .refunded)
        #expect(harness.reportedLineItems().count == 3)
        // The backend hears of each step once, in the order they happened.
        #expect(receiver.waitForAccepted(3))
        #expect(receiver.deliveries.map(\.type) == ["purchase.completed", "purchase.refunded", "purchase.refunded"])
        #expect(receiver.deliveries.allSatisfy { $0.signatureValid })
    }

    /// A refund in another currency than its payment's is no refund of it: it once set the payment's refunded
    /// total, and the real refund after it was taken as already recorded, so Apple kept money the person got back.
    @Test func aRefundInAnotherCurrencyLeavesTheRealRefundToBeReportedInFull() throws {
        let harness = try PaymentHarness(provider: .stripe)
        _ = try harness.paidLifetime(tax: 0, country: "DE")
        let foreign = StripeEvents.refunded(
            id: "evt_usd",
            charge: "ch_1",
            paymentIntent: "pi_1",
            amount: 2999,
            refunded: 2999,
            currency: "usd"
        )
        #expect(try harness.deliver(foreign).status == 200)
        try harness.waitForEvents()
        let payments = harness.live.application.ledger.payments
        #expect(try payments.purchase(id: "cs_test_fake1")?.status == .paid)
        let refused = try payments.paymentEvents(unprocessedOnly: false, limit: 5).first { $0.eventId == "evt_usd" }
        #expect(refused?.outcome?.contains("not recorded: a refund in USD of a payment in EUR") == true)
        let real = StripeEvents.refunded(
            id: "evt_eur",
            charge: "ch_1",
            paymentIntent: "pi_1",
            amount: 2999,
            refunded: 2999
        )
        #expect(try harness.deliver(real).status == 200)
        try harness.waitForEvents()
        let items = try harness.reportedLineItems().map { try PaymentHarness.canonical($0) }
        #expect(items.count == 2)
        #expect(items.last?.contains(#""amountTaxInclusive":29990"#) == true)
        #expect(
            items.last?.contains(#""eventType":"REFUND","lineItemId":"ch_1:refund:2999","netAmountTaxExclusive":0"#)
                == true
        )
        #expect(try payments.purchase(id: "cs_test_fake1")?.status == .refunded)
    }

    @Test func aTestPaymentOnAProductionTokenIsNeverReportedAsASale() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let checkout = try harness.openCheckout(sandbox: false)
        #expect(try harness.choose(checkout, product: "pro.lifetime", currency: "EUR").status == 303)
        let completed = StripeEvents.sessionCompleted(
            id: "evt_test_mode",
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.lifetime",
            total: 2999,
            tax: 0,
            country: "DE",
            paymentIntent: "pi_1"
        )
        #expect(try harness.deliver(completed).status == 200)
        try harness.waitForEvents()
        #expect(try harness.live.application.ledger.payments.purchase(id: "cs_test_fake1")?.status == .paid)
        #expect(
            try harness.live.application.ledger.reports.lineItems(for: ExternalPurchaseID(checkout.externalPurchaseId))
                .isEmpty
        )
        let event = try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 5).first
        #expect(event?.outcome?.contains("not reported to Apple") == true)
        // A checkout Stripe knows but linkout never started is not linkout's purchase.
        var foreign = checkout
        foreign.id = "aaaaaaaaaaaaaaaaaaaaaaaaaa"
        let other = StripeEvents.sessionCompleted(
            id: "evt_foreign",
            session: "cs_other_product",
            checkout: foreign,
            product: "something.else",
            total: 500,
            tax: 0,
            country: "DE"
        )
        #expect(try harness.deliver(other).status == 200)
        try harness.waitForEvents()
        #expect(try harness.live.application.ledger.payments.purchase(id: "cs_other_product") == nil)
    }

    @Test func thePaymentPageClosesBeforeTheTokenExpires() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let soon = try harness.openCheckout(expiresIn: 3600)
        #expect(try harness.choose(soon, product: "pro.lifetime", currency: "EUR").status == 303)
        let expiresAt = try #require(harness.stripe.received.first?.fields["expires_at"].flatMap { Int64($0) })
        #expect(abs(expiresAt - (Clock.system.nowSeconds() + 3600)) <= 5)
        // Less time left than Stripe's shortest session: a fresh link from the app is the way, no payment starts.
        let tooSoon = try harness.openCheckout(expiresIn: 600)
        let refused = try harness.choose(tooSoon, product: "pro.lifetime", currency: "EUR")
        #expect(refused.status == 400)
        #expect(refused.text.contains("too old"))
        #expect(harness.stripe.received.count == 1)
    }

    /// Paddle's transaction has no expiry linkout can set: with less than half an hour left on the token the person
    /// is asked for a fresh link, as with Stripe (a sale paid after the expiry could never be reported on it).
    @Test func paddlesPageIsRefusedWithLessThanHalfAnHourLeft() throws {
        let harness = try PaddleFlowTests.Harness()
        let tooSoon = try harness.payments.openCheckout(expiresIn: 600)
        let refused = try harness.payments.choose(tooSoon, product: "pro.lifetime", currency: "EUR")
        #expect(refused.status == 400 && refused.text.contains("too old"))
        let hour = try harness.payments.openCheckout(expiresIn: 3600)
        #expect(try harness.payments.choose(hour, product: "pro.lifetime", currency: "EUR").status == 303)
    }

    /// The shortest session is the provider's own, not Stripe's: the demo's page stays open as long as the token
    /// does, so ten minutes left are enough to pay.
    @Test func theShortestSessionIsTheProviders() throws {
        let harness = try PaymentHarness(provider: .demo)
        let tenMinutes = try harness.openCheckout(expiresIn: 600)
        let started = try harness.choose(tenMinutes, product: "pro.lifetime", currency: "EUR")
        #expect(started.status == 303)
        #expect(started.header("Location")?.hasPrefix("/pay/demo/") == true)
    }

    @Test func aSubscriptionStartsAndRenews() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let checkout = try harness.openCheckout()
        #expect(try harness.choose(checkout, product: "pro.monthly", currency: "EUR").status == 303)
        let sent = try #require(harness.stripe.received.first)
        #expect(sent.fields["mode"] == "subscription")
        #expect(sent.fields["line_items[0][price_data][recurring][interval]"] == "month")
        let completed = StripeEvents.sessionCompleted(
            id: "evt_start",
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.monthly",
            mode: "subscription",
            total: 399,
            tax: 0,
            country: "DE",
            subscription: "sub_1",
            // A minute before the renewal's payment, which is the later one.
            created: Clock.system.nowSeconds() - 60
        )
        #expect(try harness.deliver(completed).status == 200)
        try harness.waitForEvents()
        let start = try #require(try harness.live.application.ledger.payments.purchase(id: "cs_test_fake1"))
        let periodEnd = try #require(start.periodEnd)
        let renewal = StripeEvents.renewal(
            id: "evt_renewal",
            invoice: "in_2",
            subscription: "sub_1",
            total: 399,
            start: periodEnd / 1000,
            end: periodEnd / 1000 + 30 * 86_400
        )
        #expect(try harness.deliver(renewal).status == 200)
        // Since API version basil only `invoice_payment.paid` tells which PaymentIntent paid an invoice; a refund
        // of the renewal names only its PaymentIntent.
        let link = """
            {"id":"evt_link","object":"event","type":"invoice_payment.paid","created":\(Clock.system.nowSeconds()),\
            "livemode":false,"data":{"object":{"id":"inpay_1","object":"invoice_payment","invoice":"in_2",\
            "payment":{"type":"payment_intent","payment_intent":"pi_renewal"},"status":"paid"}}}
            """
        #expect(try harness.deliver(link).status == 200)
        let refund = StripeEvents.refunded(
            id: "evt_refund",
            charge: "ch_2",
            paymentIntent: "pi_renewal",
            amount: 399,
            refunded: 399
        )
        #expect(try harness.deliver(refund).status == 200)
        try harness.waitForEvents()
        let items = harness.reportedLineItems()
        let dates = ["subscriptionStartDate", "subscriptionEndDate", "subscriptionDaysOfPaidService"]
        #expect(
            try items.map { try PaymentHarness.canonical($0, zeroing: dates) } == [
                #"{"amountTaxExclusive":3990,"amountTaxInclusive":3990,"creationDate":0,"eventType":"BUY","lineItemId":"cs_test_fake1","netAmountTaxExclusive":3990,"pricingCurrency":"EUR","productIdentifier":"pro.monthly","productType":"SUBSCRIPTION","quantity":1,"reportingCurrency":"EUR","subscriptionDaysOfPaidService":0,"subscriptionEndDate":0,"subscriptionEvent":"SUBSCRIPTION_START","subscriptionStartDate":0,"taxAmount":0,"taxCountry":"DEU"}"#,
                #"{"amountTaxExclusive":3990,"amountTaxInclusive":3990,"creationDate":0,"eventType":"BUY","lineItemId":"in_2","netAmountTaxExclusive":3990,"pricingCurrency":"EUR","productIdentifier":"pro.monthly","productType":"SUBSCRIPTION","quantity":1,"referenceLineItemId":"cs_test_fake1","reportingCurrency":"EUR","subscriptionDaysOfPaidService":0,"subscriptionEndDate":0,"subscriptionEvent":"RENEWAL","subscriptionStartDate":0,"taxAmount":0,"taxCountry":"DEU"}"#,
                #"{"amountTaxExclusive":3990,"amountTaxInclusive":3990,"creationDate":0,"eventType":"REFUND","lineItemId":"ch_2:refund:399","netAmountTaxExclusive":0,"pricingCurrency":"EUR","referenceLineItemId":"in_2","reportingCurrency":"EUR","taxAmount":0,"taxCountry":"DEU"}"#,
            ]
        )
        #expect(items.count == 3)
        #expect(items.first?["subscriptionEvent"] as? String == "SUBSCRIPTION_START")
        #expect(items.first?["subscriptionDaysOfPaidService"] as? Int == 0)
        #expect(items.first?["amountTaxInclusive"] as? Int == 3990)
        #expect(items.first?["subscriptionEndDate"] as? Int64 == periodEnd)
        let second = try #require(items.dropFirst().first)
        #expect(second["subscriptionEvent"] as? String == "RENEWAL")
        #expect(second["lineItemId"] as? String == "in_2")
        #expect(second["referenceLineItemId"] as? String == "cs_test_fake1")
        #expect((second["subscriptionDaysOfPaidService"] as? Int ?? 0) >= 28)
        #expect(second["subscriptionStartDate"] as? Int64 == periodEnd)
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
        // A refund of one renewal leaves the subscription itself as it was.
        let ledger = harness.live.application.ledger
        #expect(try ledger.payments.purchase(id: "cs_test_fake1")?.status == .paid)
        // The first payment taken back in full, the renewal after it refunded: no later payment stands, and the
        // subscription ends.
        let refundStart = StripeEvents.refunded(
            id: "evt_refund_start",
            charge: "ch_1",
            paymentIntent: "cs_test_fake1",
            amount: 399,
            refunded: 399
        )
        #expect(try harness.deliver(refundStart).status == 200)
        try harness.waitForEvents()
        #expect(try ledger.payments.purchase(id: "cs_test_fake1")?.status == .refunded)
        // A period paid after it grants again: the person pays for it (it used to stay refunded for good).
        let next = StripeEvents.renewal(
            id: "evt_renewal_3",
            invoice: "in_3",
            subscription: "sub_1",
            total: 399,
            start: periodEnd / 1000 + 30 * 86_400,
            end: periodEnd / 1000 + 60 * 86_400
        )
        #expect(try harness.deliver(next).status == 200)
        try harness.waitForEvents()
        let renewed = try #require(try ledger.payments.purchase(id: "cs_test_fake1"))
        #expect(renewed.status == .paid)
        #expect(renewed.periodEnd == periodEnd + 60 * 86_400_000)
    }

    /// A renewal paid after the purchase's custom-link token expired lies outside that token's active range
    /// (Apple: `LineItemCreationDateOutOfRangeError`). With no other token of the customer active at its date it
    /// is held, logged once and shown on the dashboard; once the app forwards a token of the customer that was
    /// active then, the renewal is reported on it, and the next renewal goes there directly.
    @Test func aRenewalAfterThePurchasesTokenExpiredGoesOnAnActiveTokenOfTheCustomer() throws {
        // Three hours back, so every date the test reaches is past by Apple's (the fake's) clock too.
        let time = ManualClock(startingAt: Clock.system.nowMilliseconds() - 10_800_000)
        let harness = try PaymentHarness(provider: .stripe, clock: time.clock) {
            $0.adminToken = DashboardTests.adminToken
        }
        let account = PaymentHarness.account
        let start = time.clock.nowMilliseconds()
        // Created a minute ago: Stripe dates events to the second, and the sale must not seem to precede it.
        let first = PaymentHarness.servicesToken(createdAt: start - 60_000, expiresAt: start + 3_600_000)
        #expect(try harness.forward(first, account: account).status == 201)
        let checkout = try harness.openCheckout(token: first)
        #expect(try harness.choose(checkout, product: "pro.monthly", currency: "EUR").status == 303)
        let completed = StripeEvents.sessionCompleted(
            id: "evt_start",
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.monthly",
            mode: "subscription",
            total: 399,
            tax: 0,
            country: "DE",
            subscription: "sub_1",
            created: time.clock.nowSeconds()
        )
        #expect(try harness.deliver(completed, timestamp: time.clock.nowSeconds()).status == 200)
        try harness.waitForEvents()

        // Two hours on, the first token has expired when the renewal is paid (for the period after the first).
        let firstEnd = try harness.firstPeriodEnd(on: checkout.externalPurchaseId)
        time.advance(seconds: 7_200)
        let renewedAt = time.clock.nowSeconds()
        func renewal(_ invoice: String, at: Int64, period: Int64) -> String {
            StripeEvents.renewal(
                id: "evt_\(invoice)",
                invoice: invoice,
                subscription: "sub_1",
                total: 399,
                start: firstEnd + period * 30 * 86_400,
                end: firstEnd + (period + 1) * 30 * 86_400,
                created: at
            )
        }
        #expect(try harness.deliver(renewal("in_2", at: renewedAt, period: 0), timestamp: renewedAt).status == 200)
        try harness.waitForEvents()
        var items = harness.reportedLineItems()
        #expect(items.map { $0["lineItemId"] as? String } == ["cs_test_fake1"])
        #expect(harness.apple.apple.waitForRequest())  // the start's report, received above
        let ledger = harness.live.application.ledger
        #expect(try ledger.reports.lineItemsAwaitingToken(limit: 10).map(\.lineItemId) == ["in_2"])
        #expect(harness.live.logLines.all.filter { $0.contains("line item held") }.count == 1)
        #expect(try harness.live.get("/metrics").text.contains("\nlinkout_line_items_held 1\n"))
        let session = try DashboardTests.signIn(harness.live)
        let dashboard = try harness.live.get("/admin", headers: ["Cookie": session])
        #expect(dashboard.text.contains("id=\"held-line-items\""))
        #expect(dashboard.text.contains("<td>in_2</td>"))

        // The app forwards the SERVICES token an update gave the customer an hour before the renewal.
        let second = PaymentHarness.servicesToken(createdAt: start + 3_600_000, expiresAt: start + 365 * 86_400_000)
        #expect(try harness.forward(second, account: account).status == 201)
        // The forward wakes reporting: the held renewal is placed and reported without waiting for a poll.
        #expect(harness.apple.apple.waitForRequest())
        #expect(try ledger.reports.lineItemsAwaitingToken(limit: 10).isEmpty)
        #expect(
            harness.apple.apple.received.last?.report?.lineItems?.map(\.common.lineItemId) == ["in_2"]
        )
        // And the next renewal, a minute later, goes straight onto it.
        time.advance(seconds: 60)
        #expect(
            try harness.deliver(renewal("in_3", at: renewedAt + 60, period: 1), timestamp: renewedAt + 60).status == 200
        )
        try harness.waitForEvents()
        items = harness.reportedLineItems()
        #expect(items.map { $0["lineItemId"] as? String } == ["cs_test_fake1", "in_2", "in_3"])
        #expect(try ledger.reports.lineItemsAwaitingToken(limit: 10).isEmpty)
        let onSecond = harness.apple.apple.received.filter {
            $0.report?.externalPurchaseId == second.externalPurchaseId
        }
        #expect(onSecond.flatMap { $0.report?.lineItems ?? [] }.map(\.common.lineItemId).sorted() == ["in_2", "in_3"])
        #expect(items.dropFirst().allSatisfy { $0["referenceLineItemId"] as? String == "cs_test_fake1" })
        let paidDays = items.compactMap { $0["subscriptionDaysOfPaidService"] as? Int }
        #expect(paidDays.count == 3 && paidDays[2] > paidDays[1], "the held renewal's days carry on")
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty && $0.report?.status == .lineItem })
        #expect(try ledger.reports.reports(for: first.externalPurchaseId).count == 1)
    }

    @Test func badOrOldSignaturesAreRefusedAndNothingIsStored() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let event =
            #"{"id":"evt_x","object":"event","type":"checkout.session.expired","created":1,"livemode":false,"data":{"object":{"id":"cs_x","object":"checkout.session"}}}"#
        #expect(try harness.deliver(event, secret: "whsec_wrong").status == 400)
        #expect(try harness.deliver(event, timestamp: Clock.system.nowSeconds() - 301).status == 400)
        let unsigned = try harness.live.post("/webhooks/stripe", contentType: "application/json", body: event)
        #expect(unsigned.status == 400)
        #expect(try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10).isEmpty)
        #expect(try harness.deliver(event).status == 200)
        #expect(
            try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10).count == 1
        )
        // A signed event with absurd numbers is stored and marked unreadable; it never brings the server down.
        let absurd =
            #"{"id":"evt_huge","object":"event","type":"ping","created":9223372036854775807,"data":{"object":{}}}"#
        #expect(try harness.deliver(absurd).status == 200)
        try harness.waitForEvents()
        let stored = try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10)
        #expect(stored.first { $0.eventId == "evt_huge" }?.outcome?.hasPrefix("unreadable") == true)
        // Logged just after the outcome is stored: polled, not a race guard.
        #expect(
            eventually(within: 10) {
                harness.live.logLines.all.contains { $0.contains(#""level":"error""#) && $0.contains("unreadable") }
            }
        )
        #expect(try harness.live.get("/healthz").status == 200)
        // No key or secret reaches the log.
        let log = harness.live.logLines.all.joined(separator: "\n")
        #expect(!log.contains(harness.stripe.secretKey))
        #expect(!log.contains(PaymentHarness.webhookSecret))
    }

    @Test func stripeErrorsGiveARetryPageAndNeverTwoSessions() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let checkout = try harness.openCheckout()
        harness.stripe.enqueue(.respond(status: 500))
        let retried = try harness.choose(checkout, product: "pro.lifetime", currency: "EUR")
        #expect(retried.status == 303)
        #expect(harness.stripe.sessionsCreated == 1)
        let keys = harness.stripe.received.map(\.idempotencyKey)
        #expect(keys.count == 2 && keys[0] == keys[1])
        harness.stripe.enqueue(.respond(status: 429))
        let limited = try harness.choose(checkout, product: "pro.lifetime", currency: "USD")
        #expect(limited.status == 200)
        #expect(limited.text.contains("Payment is not available right now"))
        #expect(limited.text.contains(#"name="product" value="pro.lifetime""#))
        #expect(harness.stripe.sessionsCreated == 1)
        // The retry button posts the same form: now Stripe answers, and the first session is still the only EUR one.
        #expect(try harness.choose(checkout, product: "pro.lifetime", currency: "USD").status == 303)
        #expect(
            try harness.choose(checkout, product: "pro.lifetime", currency: "EUR").header("Location")
                == "https://checkout.stripe.com/c/pay/cs_test_fake1"
        )
        #expect(harness.stripe.sessionsCreated == 2)
        // A payment page that is not https is never where linkout sends anyone.
        harness.stripe.enqueue(.respond(status: 200, body: #"{"id":"cs_evil","url":"javascript:alert(1)"}"#))
        let evil = try harness.choose(try harness.openCheckout(), product: "pro.lifetime", currency: "EUR")
        #expect(evil.status == 200)
        #expect(evil.header("Location") == nil)
        #expect(evil.text.contains("Payment is not available right now"))
    }

    @Test func yenAndDinarUseTheirOwnMinorUnits() throws {
        let harness = try PaymentHarness(provider: .stripe) { configuration in
            configuration.catalog = [
                Product(
                    id: "pro.lifetime",
                    kind: .oneTime,
                    names: ["en": "Pro forever"],
                    prices: [
                        "JPY": Money(currency: "JPY", decimal: "500"), "KWD": Money(currency: "KWD", decimal: "5.120"),
                    ]
                    .compactMapValues { $0 }
                )
            ]
            configuration.payments.exchangeRates.entries["KWD"] = .init(reportingCurrency: "EUR", undated: "2.95")
        }
        let yen = try harness.openCheckout()
        #expect(try harness.choose(yen, product: "pro.lifetime", currency: "JPY").status == 303)
        let dinar = try harness.openCheckout()
        #expect(try harness.choose(dinar, product: "pro.lifetime", currency: "KWD").status == 303)
        let amounts = harness.stripe.received.map { $0.fields["line_items[0][price_data][unit_amount]"] }
        #expect(amounts == ["500", "5120"])
        #expect(
            try harness.deliver(
                StripeEvents.sessionCompleted(
                    id: "evt_jpy",
                    session: "cs_test_fake1",
                    checkout: yen,
                    product: "pro.lifetime",
                    currency: "jpy",
                    total: 500,
                    tax: 0,
                    country: "JP",
                    paymentIntent: "pi_jpy"
                )
            ).status == 200
        )
        #expect(
            try harness.deliver(
                StripeEvents.sessionCompleted(
                    id: "evt_kwd",
                    session: "cs_test_fake2",
                    checkout: dinar,
                    product: "pro.lifetime",
                    currency: "kwd",
                    total: 5120,
                    tax: 0,
                    country: "KW",
                    paymentIntent: "pi_kwd"
                )
            ).status == 200
        )
        try harness.waitForEvents()
        let items = try harness.reportedLineItems().map { try PaymentHarness.canonical($0) }.sorted()
        #expect(
            items == [
                #"{"amountTaxExclusive":15104,"amountTaxInclusive":15104,"creationDate":0,"eventType":"BUY","exchangeRate":2.95,"lineItemId":"cs_test_fake2","netAmountTaxExclusive":15104,"pricingCurrency":"KWD","productIdentifier":"pro.lifetime","productType":"ONE_TIME_BUY","quantity":1,"reportingCurrency":"EUR","taxAmount":0,"taxCountry":"KWT"}"#,
                #"{"amountTaxExclusive":500000,"amountTaxInclusive":500000,"creationDate":0,"eventType":"BUY","lineItemId":"cs_test_fake1","netAmountTaxExclusive":500000,"pricingCurrency":"JPY","productIdentifier":"pro.lifetime","productType":"ONE_TIME_BUY","quantity":1,"reportingCurrency":"JPY","taxAmount":0,"taxCountry":"JPN"}"#,
            ]
        )
    }

    @Test func anOpenPaymentHoldsBackNoLineItemUntilItCompletesOrExpires() throws {
        let harness = try PaymentHarness(provider: .stripe) { $0.reporting.noLineItemAfterSeconds = 0 }
        let checkout = try harness.openCheckout()
        #expect(try harness.choose(checkout, product: "pro.lifetime", currency: "EUR").status == 303)
        #expect(harness.reportedLineItems().isEmpty)
        #expect(harness.apple.apple.received.isEmpty)
        let expired =
            #"{"id":"evt_exp","object":"event","type":"checkout.session.expired","created":1,"livemode":false,"data":{"object":{"id":"cs_test_fake1","object":"checkout.session","client_reference_id":"\#(checkout.id)"}}}"#
        #expect(try harness.deliver(expired).status == 200)
        try harness.waitForEvents()
        _ = harness.reportedLineItems()
        #expect(harness.apple.apple.received.first?.bodyObject?["status"] as? String == "NO_LINE_ITEM")
    }
}
