import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// One line item Apple would refuse never blocks its token: it is set aside when it is made, with the rule's
/// name and the action that settles it, listed for a person, and the token's other items go to Apple as usual.
@Suite("Payment flow: one bad item never blocks its token")
struct PaymentChangeFlowSetAsideTests {
    /// A refund more than a year after its buy (`RefundNotAllowedCreationDateError`) arrives beside a renewal:
    /// before, the report carrying both was never queued (an error logged every pass, the token never listed
    /// as needing attention, the renewal waiting with it).
    @Test func aRefundAppleWouldRefuseIsSetAsideAndTheRenewalBesideItIsReported() throws {
        // Far enough back that every date the test reaches is past by the fake Apple's clock too.
        let time = ManualClock(startingAt: Clock.system.nowMilliseconds() - 405 * 86_400_000)
        let harness = try PaymentHarness(provider: .stripe, clock: time.clock) { $0.adminToken = "admin-secret" }
        let start = time.clock.nowMilliseconds()
        let token = TokenMinter.mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: true,
            tokenType: nil,
            nowMilliseconds: start - 60_000
        )
        try PaymentChangeFlowRefundHoldTests.subscribe(harness, on: token, time: time)

        // Thirteen months on: a renewal, and a refund of the first payment.
        time.advance(seconds: 400 * 86_400)
        let now = time.clock.nowSeconds()
        let renewal = StripeEvents.renewal(
            id: "evt_in_2",
            invoice: "in_2",
            subscription: "sub_1",
            total: 399,
            start: now,
            end: now + 30 * 86_400,
            created: now,
            paymentIntent: "pi_in_2"
        )
        #expect(try harness.deliver(renewal, timestamp: now).status == 200)
        let refund = StripeEvents.refunded(
            id: "evt_refund",
            charge: "ch_start",
            paymentIntent: "pi_start",
            amount: 399,
            refunded: 399,
            created: now
        )
        #expect(try harness.deliver(refund, timestamp: now).status == 200)
        try harness.waitForEvents()

        let reported = harness.reportedLineItems().compactMap { $0["lineItemId"] as? String }
        #expect(reported == ["cs_test_fake1", "in_2"])
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
        let ledger = harness.live.application.ledger
        let items = try ledger.reports.lineItems(for: token.externalPurchaseId)
        let setAside = try #require(items.first { $0.lineItemId != "cs_test_fake1" && $0.lineItemId != "in_2" })
        #expect(setAside.needsCorrection)
        #expect(setAside.reportRequestIdentifier == nil)
        #expect(setAside.correction?.contains("RefundNotAllowedCreationDateError") == true)
        #expect(
            setAside.correction?.contains("linkout report retract \(token.externalPurchaseId) \(setAside.lineItemId)")
                == true
        )

        // Listed for a person, with what Apple would say and the action, and counted.
        let attention = try harness.live.get(
            "/admin/reports?state=needs_attention",
            headers: ["Authorization": "Bearer admin-secret"]
        )
        #expect(attention.status == 200)
        #expect(attention.text.contains(token.externalPurchaseId.rawValue))
        #expect(attention.text.contains("RefundNotAllowedCreationDateError"))
        #expect(try ledger.reports.attentionCount() == 1)
        let metrics = try harness.live.get("/metrics", headers: ["Authorization": "Bearer admin-secret"])
        #expect(metrics.text.contains("linkout_reports_needing_attention 1"))

        // Dropping it settles the token: nothing is left to act on, and nothing more goes to Apple.
        let sent = harness.apple.apple.received.count
        _ = try ReportActions(ledger: ledger, clock: time.clock).retract(
            token.externalPurchaseId,
            lineItemId: setAside.lineItemId
        )
        #expect(try ledger.reports.attentionCount() == 0)
        _ = harness.reportedLineItems()
        #expect(harness.apple.apple.received.count == sent)
    }

    /// A sale dated by the provider's clock ahead of this server's (a clock not yet synchronised after a boot) is
    /// no item Apple would refuse for good: it waits for its date, is not set aside for a person, and goes to Apple
    /// once the server's clock has reached it. Before, it was set aside (`FutureDateError`) and stayed so.
    @Test func aSaleDatedAheadOfTheServersClockWaitsForItsDate() throws {
        // The server's clock three hours behind the provider's (and the fake Apple's, which is the system's).
        let time = ManualClock(startingAt: Clock.system.nowMilliseconds() - 3 * 3_600_000)
        let harness = try PaymentHarness(provider: .stripe, clock: time.clock)
        let token = TokenMinter.mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: true,
            tokenType: nil,
            nowMilliseconds: time.clock.nowMilliseconds() - 60_000
        )
        let checkout = try harness.openCheckout(token: token)
        #expect(try harness.choose(checkout, product: "pro.lifetime", currency: "EUR").status == 303)
        let completed = StripeEvents.sessionCompleted(
            id: "evt_ahead",
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.lifetime",
            total: 2999,
            tax: 0,
            country: "DE",
            paymentIntent: "pi_ahead",
            created: Clock.system.nowSeconds()
        )
        #expect(try harness.deliver(completed, timestamp: time.clock.nowSeconds()).status == 200)
        try harness.waitForEvents()
        let ledger = harness.live.application.ledger
        #expect(harness.reportedLineItems().isEmpty)
        let items = try ledger.reports.lineItems(for: token.externalPurchaseId)
        #expect(items.map(\.lineItemId) == ["cs_test_fake1"])
        #expect(items.allSatisfy { !$0.needsCorrection && $0.reportRequestIdentifier == nil })
        #expect(try ledger.reports.attentionCount() == 0)
        // The clock catches up: the next pass sends it.
        time.advance(seconds: 3 * 3_600 + 60)
        #expect(harness.reportedLineItems().compactMap { $0["lineItemId"] as? String } == ["cs_test_fake1"])
        #expect(try ledger.reports.attentionCount() == 0)
    }
}
