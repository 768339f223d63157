import Domain
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// A sale whose exchange rate is older than Apple's 48 hours (Apple: "exchangeRate") is recorded at once, its line item
/// held with the reason, a refund of it waits behind it, and both reach Apple when the operator's rates file gets the
/// day's rate, with `exchangeRate` as a plain decimal.
@Suite("Payment flow: exchange rates by date")
struct ExchangeRateHoldFlowTests {
    static func refunded(amount: Int64, refunded: Int64) -> String {
        """
        {"id":"evt_refund","object":"event","api_version":"2026-09-30.endive","created":\(Clock.system.nowSeconds()),\
        "livemode":false,"type":"charge.refunded","data":{"object":{"id":"ch_kwd","object":"charge",\
        "payment_intent":"pi_kwd","amount":\(amount),"amount_refunded":\(refunded),"currency":"kwd",\
        "refunded":false,"metadata":{}}}}
        """
    }

    static func rates(_ day: String, _ rate: String) -> Data {
        Data(#"{"KWD": {"reportingCurrency": "USD", "rates": {"\#(day)": "\#(rate)"}}}"#.utf8)
    }

    func ledger(_ harness: PaymentHarness) -> Ledger { harness.live.application.ledger }

    @Test func aSaleWaitsForTheRateOfItsDateThenIsReportedWithItsRefund() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-rates-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let now = Clock.system.nowMilliseconds()
        try Self.rates(ExchangeRateTable.dayText(now - 10 * 86_400_000), "3.20").write(to: file)
        let harness = try PaymentHarness(provider: .stripe) { configuration in
            configuration.catalog = [
                Product(
                    id: "pro.lifetime",
                    kind: .oneTime,
                    names: ["en": "Pro forever"],
                    prices: ["KWD": Money(currency: "KWD", decimal: "5.120")].compactMapValues { $0 }
                )
            ]
            configuration.payments.exchangeRatesFile = file.path
            // A token without line items would be reported NO_LINE_ITEM at once: a held sale must keep it back.
            configuration.reporting.noLineItemAfterSeconds = 0
        }
        let dinar = try harness.openCheckout()
        #expect(try harness.choose(dinar, product: "pro.lifetime", currency: "KWD").status == 303)
        let completed = StripeEvents.sessionCompleted(
            id: "evt_kwd",
            session: "cs_test_fake1",
            checkout: dinar,
            product: "pro.lifetime",
            currency: "kwd",
            total: 5120,
            tax: 0,
            country: "KW",
            paymentIntent: "pi_kwd"
        )
        #expect(try harness.deliver(completed).status == 200)
        try harness.waitForEvents()
        // The purchase is recorded (the customer has it); the line item is held, and the admin API says why.
        #expect(try harness.live.application.ledger.payments.purchase(id: "cs_test_fake1")?.status == .paid)
        #expect(harness.reportedLineItems().isEmpty)
        #expect(harness.apple.apple.received.isEmpty)
        let admin = try harness.live.get("/admin/purchases", headers: ["Authorization": "Bearer admin-secret"])
        #expect(admin.text.contains(#""state":"held""#))
        #expect(admin.text.contains("no KWD rate within 48 hours"))
        let login = try DashboardTests.loginForm(harness.live)
        let signedIn = try DashboardTests.postLogin(
            harness.live,
            cookie: login.cookie,
            csrf: login.csrf,
            token: "admin-secret"
        )
        let session = DashboardTests.cookiePair(DashboardTests.setCookie(signedIn, "linkout_admin"))
        let dashboard = try harness.live.get("/admin", headers: ["Cookie": session])
        #expect(dashboard.text.contains("Line items waiting for an exchange rate"))
        #expect(dashboard.text.contains("no KWD rate within 48 hours"))
        #expect(try harness.live.get("/metrics").text.contains("linkout_line_items_waiting_for_rate 1"))
        // The sale keeps the month of its own date open, whatever the month or state of its token (a renewal's was
        // accepted months before): it was processed, and only the token's state said it waited.
        let close = MonthlyClose(ledger: ledger(harness), configuration: harness.live.application.configuration)
        let month = try close.report(
            month: CloseMonth(containing: now),
            environment: .sandbox,
            now: now,
            status: .running
        )
        #expect(month.pendingPaymentEvents == 1)
        #expect(month.outstandingList.contains { $0.kind == "payment_event" && $0.state == "waiting_for_rate" })
        // A refund of the held buy waits behind it.
        #expect(try harness.deliver(Self.refunded(amount: 5120, refunded: 1000)).status == 200)
        let ledger = harness.live.application.ledger
        #expect(
            eventually(within: 30) {
                (try? ledger.payments.paymentEvents(unprocessedOnly: true, limit: 10).first?.outcome?.hasPrefix(
                    "waiting:"
                ))
                    == true
            }
        )
        #expect(harness.reportedLineItems().isEmpty)
        // The operator's feed writes the day's rate; the next pass reads the file again and releases both.
        try Self.rates(ExchangeRateTable.dayText(now), "3.2510").write(to: file)
        let other = """
            {"id":"evt_other","object":"event","type":"customer.created","created":\(Clock.system.nowSeconds()),\
            "livemode":false,"data":{"object":{"id":"cus_1"}}}
            """
        #expect(try harness.deliver(other).status == 200)
        try harness.waitForEvents()
        let items = try harness.reportedLineItems().map { try PaymentHarness.canonical($0) }
        #expect(
            items == [
                #"{"amountTaxExclusive":16645,"amountTaxInclusive":16645,"creationDate":0,"eventType":"BUY","exchangeRate":3.251,"lineItemId":"cs_test_fake1","netAmountTaxExclusive":16645,"pricingCurrency":"KWD","productIdentifier":"pro.lifetime","productType":"ONE_TIME_BUY","quantity":1,"reportingCurrency":"USD","taxAmount":0,"taxCountry":"KWT"}"#,
                #"{"amountTaxExclusive":3251,"amountTaxInclusive":3251,"creationDate":0,"eventType":"REFUND","exchangeRate":3.251,"lineItemId":"ch_kwd:refund:1000","netAmountTaxExclusive":13394,"pricingCurrency":"KWD","referenceLineItemId":"cs_test_fake1","reportingCurrency":"USD","taxAmount":0,"taxCountry":"KWT"}"#,
            ]
        )
        let bodies = harness.apple.apple.received.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(bodies.allSatisfy { !$0.contains("exchangeRate") || $0.contains(#""exchangeRate":3.251"#) })
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
        #expect(try harness.live.application.ledger.payments.heldPaymentEvents().isEmpty)
        #expect(try harness.live.get("/metrics").text.contains("linkout_line_items_waiting_for_rate 0"))
    }
}
