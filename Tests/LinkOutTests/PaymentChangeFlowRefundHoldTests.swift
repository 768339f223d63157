import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import Synchronization
import TestSupport
import Testing

@testable import LinkOut

/// A refund of an item Apple does not hold yet waits for it as long as that takes, and never refers to a version Apple
/// refused: a renewal held until a token of the customer can carry it (weeks, possibly), or a buy set aside by Apple's
/// rejection until the operator corrects it (Apple: "SendReportErrorResponse"; Apple would answer `NotFoundError`).
@Suite("Payment flow: a refund of an item Apple does not hold yet")
struct PaymentChangeFlowRefundHoldTests {
    static let account = PaymentHarness.account

    /// A subscription bought on `token` now, its start reported to Apple.
    static func subscribe(_ harness: PaymentHarness, on token: ExternalPurchaseToken, time: ManualClock) throws {
        #expect(try harness.forward(token, account: account).status == 201)
        let checkout = try harness.openCheckout(token: token)
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
            paymentIntent: "pi_start",
            subscription: "sub_1",
            created: time.clock.nowSeconds()
        )
        #expect(try harness.deliver(completed, timestamp: time.clock.nowSeconds()).status == 200)
        try harness.waitForEvents()
        #expect(harness.reportedLineItems().map { $0["lineItemId"] as? String } == ["cs_test_fake1"])
    }

    /// Delivers an event that changes nothing, for a pass of the payment events at the server's time.
    static func pass(_ harness: PaymentHarness, time: ManualClock, id: String) throws {
        let event = """
            {"id":"\(id)","object":"event","type":"customer.created","created":\(time.clock.nowSeconds()),\
            "livemode":false,"data":{"object":{"id":"cus_1"}}}
            """
        #expect(try harness.deliver(event, timestamp: time.clock.nowSeconds()).status == 200)
        let ledger = harness.live.application.ledger
        #expect(
            eventually(within: 30) {
                (try? ledger.payments.paymentEvents(unprocessedOnly: false, limit: 50).contains {
                    $0.eventId == id && $0.outcome != nil
                }) == true
            }
        )
    }

    static func refundOutcome(_ harness: PaymentHarness) throws -> String? {
        try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 50).first {
            $0.eventId == "evt_refund"
        }?.outcome
    }

    @Test func aRefundOfARenewalHeldForATokenWaitsLongerThanThreeDays() throws {
        // Five days back, so every date the test reaches is past by Apple's (the fake's) clock too.
        let time = ManualClock(startingAt: Clock.system.nowMilliseconds() - 5 * 86_400_000)
        let harness = try PaymentHarness(provider: .stripe, clock: time.clock)
        let start = time.clock.nowMilliseconds()
        try Self.subscribe(
            harness,
            on: PaymentHarness.servicesToken(createdAt: start - 60_000, expiresAt: start + 3_600_000),
            time: time
        )
        // Paid after the purchase's token expired, with no other token of the customer known: held.
        time.advance(seconds: 7_200)
        let renewedAt = time.clock.nowSeconds()
        let renewal = StripeEvents.renewal(
            id: "evt_in_2",
            invoice: "in_2",
            subscription: "sub_1",
            total: 399,
            start: renewedAt,
            end: renewedAt + 30 * 86_400,
            created: renewedAt,
            paymentIntent: "pi_in_2"
        )
        #expect(try harness.deliver(renewal, timestamp: renewedAt).status == 200)
        try harness.waitForEvents()
        let ledger = harness.live.application.ledger
        #expect(try ledger.reports.lineItemsAwaitingToken(limit: 10).map(\.lineItemId) == ["in_2"])
        let refund = StripeEvents.refunded(
            id: "evt_refund",
            charge: "ch_in_2",
            paymentIntent: "pi_in_2",
            amount: 399,
            refunded: 399,
            created: renewedAt + 60
        )
        #expect(try harness.deliver(refund, timestamp: time.clock.nowSeconds()).status == 200)
        #expect(eventually(within: 30) { (try? Self.refundOutcome(harness))?.hasPrefix("waiting:") == true })

        // Four days on, past the three days an event waiting for what it depends on is given up after.
        time.advance(seconds: 4 * 86_400)
        try Self.pass(harness, time: time, id: "evt_pass_1")
        #expect(try Self.refundOutcome(harness)?.hasPrefix("waiting:") == true)

        // The app forwards a token of the customer active at the renewal's date: the renewal goes on it, and so
        // does its refund on the next pass.
        let second = PaymentHarness.servicesToken(createdAt: start + 3_600_000, expiresAt: start + 365 * 86_400_000)
        #expect(try harness.forward(second, account: Self.account).status == 201)
        // The reporting pass places it; a pass can wait on the clock (the sender's pause between looks), and this
        // clock moves only when told, so each look moves it on a little.
        let placed = eventually(within: 60) {
            time.advance(by: 200)
            return (try? ledger.reports.lineItemsAwaitingToken(limit: 10).isEmpty) == true
        }
        // What a failure needs to be understood: the passes run by then, and what the ledger holds.
        let reporting = harness.live.application.reporting
        let held = (try? ledger.reports.lineItemsAwaitingToken(limit: 10))?.map(\.lineItemId.rawValue) ?? []
        let stored = try ledger.tokens.token(second.externalPurchaseId)
        #expect(
            placed,
            "passes: \(reporting.passesCompleted.load(ordering: .relaxed)), status: \(reporting.status), held: \(held), second token: \(String(describing: stored))"
        )
        // Placing it made its refund due at once (it waited behind it on the first token): no waiting out the hour
        // a waiting event is put off for.
        try Self.pass(harness, time: time, id: "evt_pass_2")
        #expect(try Self.refundOutcome(harness)?.contains("queued for Apple") == true)
        let onSecond = try ledger.reports.lineItems(for: second.externalPurchaseId).map(\.body)
        #expect(onSecond.count == 2)
        #expect(onSecond.last?.contains(#""referenceLineItemId":"in_2""#) == true)
        #expect(onSecond.last?.contains(#""eventType":"REFUND""#) == true)
    }

    @Test func aRefundOfABuySetAsideForCorrectionWaitsForTheOperator() throws {
        let time = ManualClock(startingAt: Clock.system.nowMilliseconds() - 3_600_000)
        let harness = try PaymentHarness(provider: .stripe, clock: time.clock)
        let start = time.clock.nowMilliseconds()
        let token = PaymentHarness.servicesToken(createdAt: start - 60_000, expiresAt: start + 86_400_000)
        try Self.subscribe(harness, on: token, time: time)
        // Apple refuses the buy (a rejection answered 400): it is set aside, not at Apple.
        let ledger = harness.live.application.ledger
        let report = try #require(try ledger.reports.reports(for: token.externalPurchaseId).first)
        try ledger.reports.recordRejection(
            report.requestIdentifier,
            ReportAttempt(state: .rejected, httpStatus: 400, response: "{}", nextAttemptAt: 0, at: start),
            rewrite: ReportRewrite(setAside: ["cs_test_fake1": "refused"])
        )
        let refund = StripeEvents.refunded(
            id: "evt_refund",
            charge: "ch_start",
            paymentIntent: "pi_start",
            amount: 399,
            refunded: 100,
            created: time.clock.nowSeconds()
        )
        #expect(try harness.deliver(refund, timestamp: time.clock.nowSeconds()).status == 200)
        #expect(eventually(within: 30) { (try? Self.refundOutcome(harness))?.hasPrefix("waiting:") == true })
        #expect(try ledger.reports.lineItems(for: token.externalPurchaseId).map(\.lineItemId) == ["cs_test_fake1"])
        // Past three days it still waits: the operator's correction may take longer.
        time.advance(seconds: 4 * 86_400)
        try Self.pass(harness, time: time, id: "evt_pass_1")
        #expect(try Self.refundOutcome(harness)?.hasPrefix("waiting:") == true)
        // The operator restates the buy: the refund waiting for it is due at once, not after its hour.
        let buy = try #require(try ledger.reports.lineItems(for: token.externalPurchaseId).first)
        let outcome = try ReportActions(ledger: ledger, clock: time.clock).restate(
            token.externalPurchaseId,
            lineItemId: buy.lineItemId,
            body: buy.body
        )
        #expect(outcome.detail.contains("1 payment event(s) waiting for it taken again"), "\(outcome.detail)")
        let now = time.clock.nowMilliseconds()
        let due = try ledger.payments.paymentEvents(unprocessedOnly: true, dueAt: now, limit: 10)
        #expect(due.map(\.eventId) == ["evt_refund"])
    }
}
