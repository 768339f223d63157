import Domain
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// Paddle end to end through the real server: the checkout makes a transaction on a fake Paddle through the
/// real libcurl client, Paddle-signed notifications arrive at `POST /webhooks/paddle`, the background processor
/// reads the customer's country from the transaction, and a fake Apple receives the exact line items.
@Suite("Paddle payments")
struct PaddleFlowTests {
    static let secret = "pdl_ntfset_01fake_linkouttests"
    static let hostedCheckout = "https://sandbox-pay.paddle.io/hsc_01fake"
    static let backendSecret = "hook-secret-for-paddle-tests"

    final class Harness {
        let paddle: FakePaddleServer
        let payments: PaymentHarness

        /// With `backend`, the developer's backend that gets the entitlement webhooks.
        init(backend: WebhookReceiver? = nil, clock: Clock = .system) throws {
            let paddle = try FakePaddleServer()
            paddle.setCountry("DE")
            self.paddle = paddle
            payments = try PaymentHarness(provider: .paddle, clock: clock) { configuration in
                if let backend {
                    configuration.webhooks.url = backend.url
                    configuration.webhooks.secret = PaddleFlowTests.backendSecret
                }
                configuration.payments[.paddle, "apiKey"] = paddle.apiKey
                configuration.payments[.paddle, "webhookSecret"] = PaddleFlowTests.secret
                configuration.payments[.paddle, "apiBase"] = paddle.apiBase
                configuration.payments[.paddle, "checkoutURL"] = PaddleFlowTests.hostedCheckout
            }
        }

        deinit { paddle.stop() }

        var live: LiveApplication { payments.live }

        /// Posts a notification as Paddle delivers it.
        func deliver(_ body: String, secret: String = PaddleFlowTests.secret, timestamp: Int64? = nil) throws
            -> RawClient.Response
        {
            let delivery = FakePaddleServer.signedDelivery(
                body,
                secret: secret,
                timestamp: timestamp ?? Clock.system.nowSeconds()
            )
            return try live.post(
                "/webhooks/paddle",
                contentType: "application/json",
                body: body,
                headers: ["Paddle-Signature": delivery.header]
            )
        }

        /// Chooses a product and returns the transaction the checkout made.
        func buy(_ product: String, _ checkout: PaymentHarness.Checkout) throws -> String {
            let chosen = try payments.choose(checkout, product: product, currency: "EUR")
            #expect(chosen.status == 303)
            let location = try #require(chosen.header("Location"))
            let transaction = try #require(location.split(separator: "=").last.map(String.init))
            #expect(location == "\(PaddleFlowTests.hostedCheckout)?transaction_id=\(transaction)")
            #expect(chosen.header("Set-Cookie")?.hasPrefix("linkout_checkout=\(checkout.id);") == true)
            return transaction
        }

        /// Paddle's hosted checkout sends the person back to its one redirect URL, `/pay/return`: linkout finds
        /// the checkout from the person's cookies and shows the result page.
        func returnFromPaddle(_ checkout: PaymentHarness.Checkout) throws -> RawClient.Response {
            let back = try live.get(
                "/pay/return",
                headers: ["Cookie": "\(checkout.cookie); linkout_checkout=\(checkout.id)"]
            )
            #expect(back.status == 303)
            return try live.get(try #require(back.header("Location")), headers: ["Cookie": checkout.cookie])
        }

        func custom(_ checkout: PaymentHarness.Checkout, product: String) -> [String: String] {
            [
                "linkout_checkout_id": checkout.id, "external_purchase_id": checkout.externalPurchaseId,
                "bundle_id": "com.example", "product_id": product,
            ]
        }
    }

    /// RFC 3339 of UNIX seconds, as Paddle writes times.
    static func time(_ seconds: Int64, fraction: String = "") -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            .replacingOccurrences(of: "Z", with: fraction + "Z")
    }

    @Test func aOneTimePurchaseDeliveredTwiceAndOutOfOrderIsOneLineItem() throws {
        let harness = try Harness()
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.lifetime", checkout)
        let made = try #require(harness.paddle.transactions.first)
        #expect(made.body == ["currency_code": "EUR", "amount": "2999"])
        #expect(made.customData["linkout_checkout_id"] == checkout.id)
        #expect(made.customData["external_purchase_id"] == checkout.externalPurchaseId)
        // The same form again (a double tap, a back button) goes to the same transaction.
        #expect(try harness.buy("pro.lifetime", checkout) == transaction)
        #expect(harness.paddle.transactions.count == 1)
        // A second back: a date ahead of the server's clock would wait for it (Apple refuses a date in its future).
        let now = Clock.system.nowSeconds() - 1
        let completed = PaddleFixtures.transaction(
            eventId: "evt_01done",
            occurredAt: Self.time(now, fraction: ".738971"),
            transactionId: transaction,
            currency: "EUR",
            totals: .init(subtotal: 2520, tax: 479, total: 2999),
            customData: harness.custom(checkout, product: "pro.lifetime")
        )
        let failed = PaddleFixtures.transaction(
            type: "transaction.payment_failed",
            eventId: "evt_01fail",
            occurredAt: Self.time(now - 60),
            transactionId: transaction,
            status: "ready",
            currency: "EUR",
            totals: .init(subtotal: 2520, tax: 479, total: 2999),
            customData: harness.custom(checkout, product: "pro.lifetime")
        )
        // Back before the notification: being confirmed. Another browser, or none, finds nothing.
        #expect(try harness.returnFromPaddle(checkout).text.contains("Confirming your payment"))
        #expect(
            try harness.live.get("/pay/return", headers: ["Cookie": "linkout_checkout=\(checkout.id)"]).status == 404
        )
        #expect(try harness.live.get("/pay/return").status == 404)
        // Completed twice, then the earlier failed attempt late: one purchase, still complete.
        #expect(try harness.deliver(completed).status == 200)
        #expect(try harness.deliver(completed).status == 200)
        #expect(try harness.deliver(failed).status == 200)
        try harness.payments.waitForEvents()
        let purchases = try harness.live.application.ledger.payments.purchases(
            externalPurchaseId: ExternalPurchaseID(checkout.externalPurchaseId)
        )
        #expect(purchases.count == 1)
        #expect(purchases.first?.provider == .paddle)
        #expect(try harness.live.application.ledger.payments.paymentSession(id: transaction)?.state == .complete)
        #expect(try harness.returnFromPaddle(checkout).text.contains("Test payment completed"))
        // The country came from the transaction's address, asked for in the background.
        #expect(harness.paddle.requests.contains("GET /transactions/\(transaction)?include=address"))
        let items = harness.payments.reportedLineItems()
        #expect(
            try items.map { try PaymentHarness.canonical($0) } == [
                #"{"amountTaxExclusive":25200,"amountTaxInclusive":29990,"creationDate":0,"eventType":"BUY","lineItemId":"\#(transaction)","netAmountTaxExclusive":25200,"pricingCurrency":"EUR","productIdentifier":"pro.lifetime","productType":"ONE_TIME_BUY","quantity":1,"reportingCurrency":"EUR","taxAmount":4790,"taxCountry":"DEU"}"#
            ]
        )
        #expect(items.first?["creationDate"] as? Int64 == now * 1000 + 738)
        let report = try #require(harness.payments.apple.apple.received.first?.bodyObject)
        #expect(report["status"] as? String == "LINE_ITEM")
        // Operations see the provider and Paddle's transaction id.
        let admin = try harness.live.get("/admin/purchases", headers: ["Authorization": "Bearer admin-secret"])
        #expect(admin.text.contains(#""provider":"paddle""#))
        #expect(admin.text.contains(#""purchaseId":"\#(transaction)""#))
        let csv = try harness.live.get("/admin/purchases.csv", headers: ["Authorization": "Bearer admin-secret"])
        #expect(csv.text.contains("\(transaction),paddle,\(checkout.externalPurchaseId)"))
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// A billing country Apple has no code for (Kosovo's `XK`) is reported under `payments.defaultTaxCountry`, as
    /// documented, and the operator hears of it (it was silent).
    @Test func aBillingCountryAppleHasNoCodeForIsReportedUnderTheDefaultAndLogged() throws {
        let harness = try Harness()
        harness.paddle.setCountry("XK")
        let now = Clock.system.nowSeconds()
        let (_, completed) = try PaddleChargebackReversalTests.sale(harness, event: "evt_xk", at: now - 1)
        #expect(try harness.deliver(completed).status == 200)
        try harness.payments.waitForEvents()
        #expect(harness.payments.reportedLineItems().first?["taxCountry"] as? String == "DEU")
        #expect(
            harness.live.logLines.all.contains { $0.contains("billing country unknown to Apple") && $0.contains("XK") }
        )
    }

    /// Paddle refusing the address read for good (a key without the permission) must not hold the sale until it is
    /// given up unreported: it goes on with the configured tax country.
    @Test func aRefusedAddressReadStillRecordsTheSale() throws {
        let harness = try Harness()
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.lifetime", checkout)
        harness.paddle.setCountry("FR")
        harness.paddle.refuseReads(status: 403)
        let completed = PaddleFixtures.transaction(
            eventId: "evt_01refused",
            occurredAt: Self.time(Clock.system.nowSeconds()),
            transactionId: transaction,
            currency: "EUR",
            totals: .init(subtotal: 2520, tax: 479, total: 2999),
            customData: harness.custom(checkout, product: "pro.lifetime")
        )
        #expect(try harness.deliver(completed).status == 200)
        try harness.payments.waitForEvents()
        let purchases = try harness.live.application.ledger.payments.purchases(
            externalPurchaseId: ExternalPurchaseID(checkout.externalPurchaseId)
        )
        #expect(purchases.count == 1)
        #expect(harness.paddle.requests.contains("GET /transactions/\(transaction)?include=address"))
        #expect(harness.payments.reportedLineItems().map { $0["taxCountry"] as? String } == ["DEU"])
    }

    @Test func aStartARenewalAndAProratedUpgradeGiveTheExactAppleBodies() throws {
        let backend = try WebhookReceiver(secret: Self.backendSecret)
        defer { backend.stop() }
        let harness = try Harness(backend: backend)
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.monthly", checkout)
        #expect(harness.paddle.transactions.first?.body["billing_cycle"] == "1 month")
        let now = Clock.system.nowSeconds()
        let day: Int64 = 86_400
        let custom = harness.custom(checkout, product: "pro.monthly")
        let start = PaddleFixtures.transaction(
            eventId: "evt_01start",
            occurredAt: Self.time(now - 2),
            transactionId: transaction,
            origin: "web",
            subscriptionId: "sub_01x",
            currency: "EUR",
            totals: .init(subtotal: 335, tax: 64, total: 399),
            customData: custom,
            billingPeriod: (Self.time(now - 40 * day), Self.time(now - 10 * day))
        )
        let renewal = PaddleFixtures.transaction(
            eventId: "evt_01renew",
            occurredAt: Self.time(now - 1),
            transactionId: "txn_01renew",
            origin: "subscription_recurring",
            subscriptionId: "sub_01x",
            currency: "EUR",
            totals: .init(subtotal: 335, tax: 64, total: 399),
            customData: custom,
            billingPeriod: (Self.time(now - 10 * day), Self.time(now + 20 * day))
        )
        let upgrade = PaddleFixtures.transaction(
            eventId: "evt_01upgrade",
            occurredAt: Self.time(now),
            transactionId: "txn_01upgrade",
            origin: "subscription_update",
            subscriptionId: "sub_01x",
            currency: "EUR",
            totals: .init(subtotal: 210, tax: 40, total: 250),
            customData: custom,
            billingPeriod: (Self.time(now), Self.time(now + 20 * day))
        )
        harness.paddle.addTransaction("txn_01renew", customData: custom)
        harness.paddle.addTransaction("txn_01upgrade", customData: custom)
        for body in [start, renewal, upgrade] {
            #expect(try harness.deliver(body).status == 200)
            try harness.payments.waitForEvents()
        }
        let items = harness.payments.reportedLineItems()
        let ms = { (seconds: Int64) in seconds * 1000 }
        #expect(
            try items.map { try PaymentHarness.canonical($0) } == [
                #"{"amountTaxExclusive":3350,"amountTaxInclusive":3990,"creationDate":0,"eventType":"BUY","lineItemId":"\#(transaction)","netAmountTaxExclusive":3350,"pricingCurrency":"EUR","productIdentifier":"pro.monthly","productType":"SUBSCRIPTION","quantity":1,"reportingCurrency":"EUR","subscriptionDaysOfPaidService":0,"subscriptionEndDate":\#(ms(now - 10 * day)),"subscriptionEvent":"SUBSCRIPTION_START","subscriptionStartDate":\#(ms(now - 40 * day)),"taxAmount":640,"taxCountry":"DEU"}"#,
                #"{"amountTaxExclusive":3350,"amountTaxInclusive":3990,"creationDate":0,"eventType":"BUY","lineItemId":"txn_01renew","netAmountTaxExclusive":3350,"pricingCurrency":"EUR","productIdentifier":"pro.monthly","productType":"SUBSCRIPTION","quantity":1,"referenceLineItemId":"\#(transaction)","reportingCurrency":"EUR","subscriptionDaysOfPaidService":30,"subscriptionEndDate":\#(ms(now + 20 * day)),"subscriptionEvent":"RENEWAL","subscriptionStartDate":\#(ms(now - 10 * day)),"taxAmount":640,"taxCountry":"DEU"}"#,
                #"{"amountTaxExclusive":2100,"amountTaxInclusive":2500,"creationDate":0,"eventType":"BUY","lineItemId":"txn_01upgrade","netAmountTaxExclusive":2100,"pricingCurrency":"EUR","productIdentifier":"pro.monthly","productType":"SUBSCRIPTION","quantity":1,"referenceLineItemId":"\#(transaction)","reportingCurrency":"EUR","subscriptionDaysOfPaidService":40,"subscriptionEndDate":\#(ms(now + 20 * day)),"subscriptionEvent":"SUBSCRIPTION_CHANGE","subscriptionStartDate":\#(ms(now)),"taxAmount":400,"taxCountry":"DEU"}"#,
            ]
        )
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
        // Paddle's cancellation ends the subscription.
        let canceled = PaddleFixtures.subscriptionCanceled(
            eventId: "evt_01cancel",
            occurredAt: Self.time(now),
            subscriptionId: "sub_01x",
            canceledAt: Self.time(now),
            customData: custom
        )
        #expect(try harness.deliver(canceled).status == 200)
        try harness.payments.waitForEvents()
        #expect(try harness.live.application.ledger.payments.purchase(id: transaction)?.status == .ended)
        // The developer's backend hears of the end: `subscription.ended`, signed, after the start's
        // `purchase.completed` and the renewals.
        #expect(
            eventually(within: 30) { backend.deliveries.contains { $0.type == "subscription.ended" } }
        )
        let ended = try #require(backend.deliveries.first { $0.type == "subscription.ended" })
        #expect(ended.signatureValid)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(ended.body)) as? [String: Any])
        #expect(event["type"] as? String == "subscription.ended")
        #expect((event["purchase"] as? [String: Any])?["productId"] as? String == "pro.monthly")
        #expect(backend.deliveries.filter { $0.type == "subscription.ended" }.count == 1)
    }

    /// A completed EUR payment `id` of subscription `subscription` at `at` (UNIX s), for `period` (UNIX s) when
    /// Paddle bills one.
    static func subscriptionPayment(
        _ id: String,
        _ origin: String,
        of subscription: String,
        at: Int64,
        period: (Int64, Int64)?,
        totals: PaddleFixtures.Totals = .init(subtotal: 335, tax: 64, total: 399),
        customData: [String: String]
    ) -> String {
        PaddleFixtures.transaction(
            eventId: "evt_\(id)",
            occurredAt: time(at),
            transactionId: id,
            origin: origin,
            subscriptionId: subscription,
            currency: "EUR",
            totals: totals,
            customData: customData,
            billingPeriod: period.map { (time($0.0), time($0.1)) }
        )
    }

    /// Monthly, then yearly, then monthly again ten days later: a change Paddle bills without a period runs to the
    /// end of the monthly period the downgrade began, not to the yearly end (the latest end ever seen), and the
    /// subscription's period ends with the downgrade's.
    @Test func aChangeWithoutAPeriodAfterADowngradeRunsToTheDowngradesEnd() throws {
        let harness = try Harness()
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.monthly", checkout)
        let now = Clock.system.nowSeconds()
        let day: Int64 = 86_400
        let custom = harness.custom(checkout, product: "pro.monthly")
        func paid(_ id: String, _ origin: String, at: Int64, _ period: (Int64, Int64)?) -> String {
            Self.subscriptionPayment(
                id,
                origin,
                of: "sub_01down",
                at: now + at,
                period: period.map { (now + $0.0, now + $0.1) },
                customData: custom
            )
        }
        let deliveries = [
            paid(transaction, "web", at: -60 * day, (-60 * day, -30 * day)),
            paid("txn_01yearly", "subscription_update", at: -20 * day, (-20 * day, 345 * day)),
            paid("txn_01monthly", "subscription_update", at: -10 * day, (-10 * day, 20 * day)),
            paid("txn_01seat", "subscription_update", at: -5 * day, nil),
        ]
        for id in ["txn_01yearly", "txn_01monthly", "txn_01seat"] {
            harness.paddle.addTransaction(id, customData: custom)
        }
        for body in deliveries {
            #expect(try harness.deliver(body).status == 200)
            try harness.payments.waitForEvents()
        }
        let items = harness.payments.reportedLineItems()
        let seat = try #require(items.first { $0["lineItemId"] as? String == "txn_01seat" })
        #expect(seat["subscriptionStartDate"] as? Int64 == (now - 5 * day) * 1000)
        #expect(seat["subscriptionEndDate"] as? Int64 == (now + 20 * day) * 1000, "\(seat)")
        #expect(
            try harness.live.application.ledger.payments.purchase(id: transaction)?.periodEnd == (now + 20 * day) * 1000
        )
    }

    /// A change billed without a period, delivered before the renewal of the period it was made in: it waits for
    /// that renewal, then runs to its end. It was made a change of no days (start = end) and set aside, its money
    /// never reported.
    @Test func aChangeWithoutAPeriodWaitsForTheRenewalItWasMadeIn() throws {
        let harness = try Harness()
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.monthly", checkout)
        let now = Clock.system.nowSeconds()
        let day: Int64 = 86_400
        let custom = harness.custom(checkout, product: "pro.monthly")
        func paid(_ id: String, _ origin: String, at: Int64, total: Int64, _ period: (Int64, Int64)?) -> String {
            Self.subscriptionPayment(
                id,
                origin,
                of: "sub_01late",
                at: now + at,
                period: period.map { (now + $0.0, now + $0.1) },
                totals: .init(subtotal: total - total * 16 / 100, tax: total * 16 / 100, total: total),
                customData: custom
            )
        }
        harness.paddle.addTransaction("txn_01renewal", customData: custom)
        harness.paddle.addTransaction("txn_01change", customData: custom)
        #expect(
            try harness.deliver(paid(transaction, "web", at: -40 * day, total: 399, (-40 * day, -10 * day))).status
                == 200
        )
        try harness.payments.waitForEvents()
        // The change, made five days ago, comes before the renewal of the period it was made in.
        #expect(
            try harness.deliver(paid("txn_01change", "subscription_update", at: -5 * day, total: 500, nil)).status
                == 200
        )
        let ledger = harness.live.application.ledger
        let outcomes = { () -> [String] in
            let events = (try? ledger.payments.paymentEvents(unprocessedOnly: false, limit: 20)) ?? []
            return events.map { "\($0.eventId): \($0.outcome?.description ?? "-")" }
        }
        #expect(
            eventually(within: 30) {
                (try? ledger.payments.paymentEvents(unprocessedOnly: false, limit: 20))?
                    .first { $0.eventId == "evt_txn_01change" }?.outcome?.description.hasPrefix("waiting:") == true
            },
            "\(outcomes())"
        )
        #expect(
            try harness.deliver(
                paid("txn_01renewal", "subscription_recurring", at: -10 * day, total: 399, (-10 * day, 20 * day))
            ).status == 200
        )
        try harness.payments.waitForEvents()
        let change = try #require(
            eventually(within: 30) {
                harness.payments.reportedLineItems().contains { $0["lineItemId"] as? String == "txn_01change" }
            }
                ? harness.payments.reportedLineItems().last { $0["lineItemId"] as? String == "txn_01change" } : nil,
            "\(outcomes())"
        )
        #expect(change["subscriptionStartDate"] as? Int64 == (now - 5 * day) * 1000)
        #expect(change["subscriptionEndDate"] as? Int64 == (now + 20 * day) * 1000, "\(change)")
        #expect(change["amountTaxInclusive"] as? Int == 5000)
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    @Test func aPartialRefundApprovedLaterAndAChargebackSumToTheBuy() throws {
        let harness = try Harness()
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.lifetime", checkout)
        let now = Clock.system.nowSeconds()
        let completed = PaddleFixtures.transaction(
            eventId: "evt_02done",
            occurredAt: Self.time(now - 3),
            transactionId: transaction,
            currency: "EUR",
            totals: .init(subtotal: 2520, tax: 479, total: 2999),
            customData: harness.custom(checkout, product: "pro.lifetime")
        )
        func adjustment(
            _ event: String,
            _ type: String,
            _ id: String,
            _ action: String,
            _ status: String,
            _ total: Int64,
            _ tax: Int64
        ) -> String {
            PaddleFixtures.adjustment(
                type: type,
                eventId: event,
                occurredAt: Self.time(now - 1),
                adjustmentId: id,
                action: action,
                status: status,
                transactionId: transaction,
                currency: "EUR",
                total: total,
                tax: tax
            )
        }
        let bodies = [
            completed,
            // Asked for, then approved (and touched again later): one refund.
            adjustment("evt_02a", "adjustment.created", "adj_01refund", "refund", "pending_approval", 1000, 160),
            adjustment("evt_02b", "adjustment.updated", "adj_01refund", "refund", "approved", 1000, 160),
            adjustment("evt_02c", "adjustment.updated", "adj_01refund", "refund", "approved", 1000, 160),
            // The rest charged back by the card holder's bank.
            adjustment("evt_02d", "adjustment.created", "adj_01cb", "chargeback", "approved", 1999, 319),
        ]
        for body in bodies {
            #expect(try harness.deliver(body).status == 200)
            try harness.payments.waitForEvents()
        }
        let items = harness.payments.reportedLineItems()
        // Each refund's tax is Paddle's own `totals.tax` (1.60, 3.19), not a share of the buy's by proportion
        // (1.597, 3.193, what linkout sent before).
        #expect(
            try items.map { try PaymentHarness.canonical($0) } == [
                #"{"amountTaxExclusive":25200,"amountTaxInclusive":29990,"creationDate":0,"eventType":"BUY","lineItemId":"\#(transaction)","netAmountTaxExclusive":25200,"pricingCurrency":"EUR","productIdentifier":"pro.lifetime","productType":"ONE_TIME_BUY","quantity":1,"reportingCurrency":"EUR","taxAmount":4790,"taxCountry":"DEU"}"#,
                #"{"amountTaxExclusive":8400,"amountTaxInclusive":10000,"creationDate":0,"eventType":"REFUND","lineItemId":"\#(transaction):refund:adj_01refund","netAmountTaxExclusive":16800,"pricingCurrency":"EUR","referenceLineItemId":"\#(transaction)","reportingCurrency":"EUR","taxAmount":1600,"taxCountry":"DEU"}"#,
                #"{"amountTaxExclusive":16800,"amountTaxInclusive":19990,"creationDate":0,"eventType":"REFUND","lineItemId":"\#(transaction):dispute:adj_01cb","netAmountTaxExclusive":0,"pricingCurrency":"EUR","referenceLineItemId":"\#(transaction)","reportingCurrency":"EUR","taxAmount":3190,"taxCountry":"DEU"}"#,
            ]
        )
        let refunds = items.filter { $0["eventType"] as? String == "REFUND" }
        #expect(refunds.compactMap { $0["amountTaxInclusive"] as? Int }.reduce(0, +) == 29990)
        #expect(refunds.compactMap { $0["taxAmount"] as? Int }.reduce(0, +) == 4790)
        #expect(try harness.live.application.ledger.payments.purchase(id: transaction)?.status == .refunded)
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// A renewal paid from the credit a downgrade left (Paddle's `grand_total` 0, `total` the period's price):
    /// Apple gets what was charged (0), and the period counts as paid service (before, it added 0 days).
    @Test func aRenewalPaidFromCreditChargesNothingAndCountsItsDays() throws {
        let harness = try Harness()
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.monthly", checkout)
        let now = Clock.system.nowSeconds()
        let day: Int64 = 86_400
        let custom = harness.custom(checkout, product: "pro.monthly")
        let start = PaddleFixtures.transaction(
            eventId: "evt_08start",
            occurredAt: Self.time(now - 2),
            transactionId: transaction,
            origin: "web",
            subscriptionId: "sub_08x",
            currency: "EUR",
            totals: .init(subtotal: 335, tax: 64, total: 399),
            customData: custom,
            billingPeriod: (Self.time(now - 40 * day), Self.time(now - 10 * day))
        )
        let renewal = PaddleFixtures.transaction(
            eventId: "evt_08renew",
            occurredAt: Self.time(now - 1),
            transactionId: "txn_08renew",
            origin: "subscription_recurring",
            subscriptionId: "sub_08x",
            currency: "EUR",
            totals: .init(subtotal: 335, tax: 64, total: 399),
            customData: custom,
            billingPeriod: (Self.time(now - 10 * day), Self.time(now + 20 * day))
        ).replacingOccurrences(
            of: #""grand_total":"399","grand_total_tax":"64""#,
            with: #""grand_total":"0","grand_total_tax":"0""#
        )
        #expect(renewal.contains(#""grand_total":"0""#))
        let next = PaddleFixtures.transaction(
            eventId: "evt_08next",
            occurredAt: Self.time(now),
            transactionId: "txn_08next",
            origin: "subscription_recurring",
            subscriptionId: "sub_08x",
            currency: "EUR",
            totals: .init(subtotal: 335, tax: 64, total: 399),
            customData: custom,
            billingPeriod: (Self.time(now + 20 * day), Self.time(now + 50 * day))
        )
        harness.paddle.addTransaction("txn_08renew", customData: custom)
        harness.paddle.addTransaction("txn_08next", customData: custom)
        for body in [start, renewal, next] {
            #expect(try harness.deliver(body).status == 200)
            try harness.payments.waitForEvents()
        }
        let items = harness.payments.reportedLineItems()
        #expect(items.count == 3)
        let renewed = try #require(items.first { $0["lineItemId"] as? String == "txn_08renew" })
        #expect(renewed["subscriptionEvent"] as? String == "RENEWAL")
        #expect(renewed["amountTaxInclusive"] as? Int == 0)
        // The next renewal counts the start's 30 days and the 30 paid from credit.
        let after = try #require(items.first { $0["lineItemId"] as? String == "txn_08next" })
        #expect(after["subscriptionDaysOfPaidService"] as? Int == 60)
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    @Test func wrongOldAndMissingSignaturesAre400AndStoreNothing() throws {
        let harness = try Harness()
        let body =
            #"{"event_id":"evt_03","event_type":"customer.created","occurred_at":"2026-01-01T00:00:00Z","data":{}}"#
        #expect(try harness.deliver(body, secret: "pdl_ntfset_wrong").status == 400)
        #expect(try harness.deliver(body, timestamp: Clock.system.nowSeconds() - 61).status == 400)
        #expect(try harness.live.post("/webhooks/paddle", contentType: "application/json", body: body).status == 400)
        let stripeSigned = try harness.payments.deliver(body)
        #expect(stripeSigned.status == 404 || stripeSigned.status == 400)
        #expect(try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10).isEmpty)
        #expect(try harness.deliver(body).status == 200)
        #expect(
            try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10).count == 1
        )
        let log = harness.live.logLines.all.joined(separator: "\n")
        #expect(!log.contains(harness.paddle.apiKey))
        #expect(!log.contains(PaddleFlowTests.secret))
    }

    @Test func a429OrA5xxAtCheckoutShowsTheRetryPageAndNeverTwoTransactions() throws {
        let harness = try Harness()
        let checkout = try harness.payments.openCheckout()
        harness.paddle.enqueue(.respond(status: 429), .createThenRespond(status: 502))
        for _ in 0..<2 {
            let page = try harness.payments.choose(checkout, product: "pro.lifetime", currency: "EUR")
            #expect(page.status == 200)
            #expect(page.text.contains("Payment is not available right now"))
            #expect(page.text.contains(#"name="product" value="pro.lifetime""#))
        }
        // Paddle made one after the 502; the retry button finds it instead of making a second.
        #expect(harness.paddle.transactions.count == 1)
        let transaction = try harness.buy("pro.lifetime", checkout)
        #expect(transaction == harness.paddle.transactions.first?.id)
        #expect(try harness.buy("pro.lifetime", checkout) == transaction)
        #expect(harness.paddle.transactions.count == 1)
        #expect(harness.paddle.requests.filter { $0.hasPrefix("POST") }.count == 2)
        // The card is declined on Paddle's page: the transaction stays payable, so the person comes back to
        // "being processed"; once Paddle cancels it, to "not completed".
        let attempt = { (type: String, event: String) in
            PaddleFixtures.transaction(
                type: type,
                eventId: event,
                occurredAt: Self.time(Clock.system.nowSeconds()),
                transactionId: transaction,
                status: "ready",
                currency: "EUR",
                totals: .init(subtotal: 2999, tax: 0, total: 2999),
                customData: harness.custom(checkout, product: "pro.lifetime")
            )
        }
        #expect(try harness.deliver(attempt("transaction.payment_failed", "evt_04fail")).status == 200)
        try harness.payments.waitForEvents()
        #expect(try harness.returnFromPaddle(checkout).text.contains("Payment is being processed"))
        #expect(try harness.deliver(attempt("transaction.canceled", "evt_04cancel")).status == 200)
        try harness.payments.waitForEvents()
        #expect(try harness.returnFromPaddle(checkout).text.contains("Payment not completed"))
    }
}
