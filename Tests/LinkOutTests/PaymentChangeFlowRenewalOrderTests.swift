import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// Stripe delivers events in no set order (a retried delivery can come after the next month's): a renewal that
/// arrives after the next one follows the period before it, and the next one is restated with its days.
@Suite("Payment flow: renewals delivered out of order")
struct PaymentChangeFlowRenewalOrderTests {
    /// What happened before the late renewal came.
    enum Before: CaseIterable, Sendable {
        /// Nothing: the next one is still unsent, or in a report on its way.
        case nothing
        /// Apple accepted the next one: its new version is a restatement.
        case appleHeldTheNext
        /// Apple accepted the next one and a part of it was refunded: its new version's net is the buy's less it.
        case theNextWasRefunded
    }

    /// A Stripe subscription started a hundred days ago on a sandbox token, its start reported.
    static func subscribed() throws -> (ManualClock, PaymentHarness, ExternalPurchaseToken) {
        let time = ManualClock(startingAt: Clock.system.nowMilliseconds() - 100 * 86_400_000)
        let harness = try PaymentHarness(provider: .stripe, clock: time.clock)
        let token = TokenMinter.mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: true,
            tokenType: nil,
            nowMilliseconds: time.clock.nowMilliseconds() - 60_000
        )
        try PaymentChangeFlowRefundHoldTests.subscribe(harness, on: token, time: time)
        return (time, harness, token)
    }

    /// Before, the late renewal followed the latest delivered one and counted that one's period as paid days before
    /// its own (62 instead of 31), and the next kept days that left the late one's period out.
    @Test(arguments: Before.allCases)
    func aRenewalDeliveredAfterTheNextFollowsThePeriodBeforeIt(before: Before) throws {
        let (time, harness, token) = try Self.subscribed()
        let started = try #require(harness.reportedLineItems().first)
        let startDays = SubscriptionPeriod(
            start: try #require(started["subscriptionStartDate"] as? Int64),
            end: try #require(started["subscriptionEndDate"] as? Int64)
        ).days
        let periodEnd = try #require(started["subscriptionEndDate"] as? Int64) / 1000
        let month: Int64 = 30 * 86_400
        func renewal(_ invoice: String, from start: Int64) -> String {
            StripeEvents.renewal(
                id: "evt_\(invoice)",
                invoice: invoice,
                subscription: "sub_1",
                total: 399,
                start: start,
                end: start + month,
                created: start,
                paymentIntent: "pi_\(invoice)"
            )
        }

        time.advance(seconds: periodEnd + month + 60 - time.clock.nowSeconds())
        let next = renewal("in_3", from: periodEnd + month)
        #expect(try harness.deliver(next, timestamp: time.clock.nowSeconds()).status == 200)
        try harness.waitForEvents()
        if before != .nothing {
            #expect(harness.reportedLineItems().map { $0["lineItemId"] as? String } == ["cs_test_fake1", "in_3"])
        }
        if before == .theNextWasRefunded {
            let refund = StripeEvents.refunded(
                id: "evt_refund",
                charge: "ch_3",
                paymentIntent: "pi_in_3",
                amount: 399,
                refunded: 100,
                created: time.clock.nowSeconds()
            )
            #expect(try harness.deliver(refund, timestamp: time.clock.nowSeconds()).status == 200)
            try harness.waitForEvents()
            #expect(harness.reportedLineItems().count == 3)
        }
        #expect(try harness.deliver(renewal("in_2", from: periodEnd), timestamp: time.clock.nowSeconds()).status == 200)
        try harness.waitForEvents()

        let items = harness.reportedLineItems()
        let latest = Dictionary(items.map { ($0["lineItemId"] as? String ?? "", $0) }) { $1 }
        #expect(latest["in_2"]?["subscriptionDaysOfPaidService"] as? Int == Int(startDays))
        #expect(latest["in_3"]?["subscriptionDaysOfPaidService"] as? Int == Int(startDays) + 30)
        if before != .nothing {
            #expect(items.map { $0["lineItemId"] as? String }.suffix(2) == ["in_2", "in_3"])
            #expect(latest["in_3"]?["restatement"] as? Bool == true)
        }
        if before == .theNextWasRefunded {
            // 3.99 without tax, less the 1.00 refunded: what stands of it.
            #expect(latest["in_3"]?["netAmountTaxExclusive"] as? Int == 2990)
        }
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
        let ledger = harness.live.application.ledger
        #expect(try ledger.reports.needingAttention(limit: 10).isEmpty)
        #expect(try ledger.payments.purchase(id: "cs_test_fake1")?.paidDays == Int64(startDays) + 30)
        let outcomes = try ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10).compactMap(\.outcome)
        #expect(outcomes.contains { $0.description.contains("days of paid service of in_3 restated") })

        // A new version stored without the flag while Apple holds one goes as a restatement all the same: the
        // planner decides as it sends (a report may take the earlier version after the new one was made).
        if before == .appleHeldTheNext {
            let held = try #require(
                try ledger.reports.lineItems(for: token.externalPurchaseId).last { $0.lineItemId == "in_3" }
            )
            #expect(held.body.contains(#""restatement":true"#))
            let unflagged = held.body.replacingOccurrences(of: #","restatement":true"#, with: "")
                .replacingOccurrences(of: #""restatement":true,"#, with: "")
            #expect(!unflagged.contains("restatement"))
            _ = try ledger.reports.correctLineItem(
                "in_3",
                of: token.externalPurchaseId,
                replacement: unflagged,
                now: time.clock.nowMilliseconds()
            )
            let sent = harness.reportedLineItems()
            #expect(sent.last?["lineItemId"] as? String == "in_3")
            #expect(sent.last?["restatement"] as? Bool == true)
            #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
        }
    }

    /// A renewal whose period ends before it starts (a malformed event) is not recorded: counted, it took days of
    /// paid service from the renewals after it, which were restated at Apple, while its own item was set aside.
    @Test func aRenewalWhosePeriodEndsBeforeItStartsChangesNothing() throws {
        let (time, harness, token) = try Self.subscribed()
        let started = try #require(harness.reportedLineItems().first)
        let periodEnd = try #require(started["subscriptionEndDate"] as? Int64) / 1000
        let month: Int64 = 30 * 86_400
        time.advance(seconds: periodEnd + 60 - time.clock.nowSeconds())
        let renewal = StripeEvents.renewal(
            id: "evt_in_2",
            invoice: "in_2",
            subscription: "sub_1",
            total: 399,
            start: periodEnd,
            end: periodEnd + month,
            created: periodEnd,
            paymentIntent: "pi_in_2"
        )
        #expect(try harness.deliver(renewal, timestamp: time.clock.nowSeconds()).status == 200)
        try harness.waitForEvents()
        let before = harness.reportedLineItems()
        #expect(before.map { $0["lineItemId"] as? String } == ["cs_test_fake1", "in_2"])

        // Reversed: it starts a month before the renewal's start and "ends" at the subscription's start.
        let reversed = StripeEvents.renewal(
            id: "evt_in_bad",
            invoice: "in_bad",
            subscription: "sub_1",
            total: 399,
            start: periodEnd - month / 2,
            end: periodEnd - month,
            created: time.clock.nowSeconds(),
            paymentIntent: "pi_in_bad"
        )
        #expect(try harness.deliver(reversed, timestamp: time.clock.nowSeconds()).status == 200)
        try harness.waitForEvents()
        let outcome = try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10)
            .first { $0.eventId == "evt_in_bad" }?.outcome
        #expect(
            outcome?.description.contains("its period ends before it starts") == true,
            "\(outcome?.description ?? "")"
        )
        #expect(harness.reportedLineItems().count == before.count)
        #expect(try harness.live.application.ledger.reports.lineItems(for: token.externalPurchaseId).count == 2)
    }

    /// Renewals held for a token (the purchase's custom-link token expired, no other of the customer's known yet)
    /// that arrive out of order: the held one after the late one is rewritten in place with its days (Apple never
    /// saw it), and both go out right once a token can carry them (before, it kept the days that left the late
    /// one's period out, for good).
    @Test func aHeldRenewalAfterALateOneIsRewrittenWithItsDays() throws {
        let time = ManualClock(startingAt: Clock.system.nowMilliseconds() - 10_800_000)
        let harness = try PaymentHarness(provider: .stripe, clock: time.clock)
        let account = PaymentHarness.account
        let start = time.clock.nowMilliseconds()
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
        let started = try #require(harness.reportedLineItems().first)
        let startDays = SubscriptionPeriod(
            start: try #require(started["subscriptionStartDate"] as? Int64),
            end: try #require(started["subscriptionEndDate"] as? Int64)
        ).days

        // Two hours on, the first token has expired: the later renewal comes first, then the one before it.
        time.advance(seconds: 7_200)
        let renewedAt = time.clock.nowSeconds()
        let firstEnd = try harness.firstPeriodEnd(on: checkout.externalPurchaseId)
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
        #expect(
            try harness.deliver(renewal("in_3", at: renewedAt + 60, period: 1), timestamp: renewedAt + 60).status == 200
        )
        try harness.waitForEvents()
        #expect(try harness.deliver(renewal("in_2", at: renewedAt, period: 0), timestamp: renewedAt + 60).status == 200)
        try harness.waitForEvents()
        let ledger = harness.live.application.ledger
        let held = try ledger.reports.lineItemsAwaitingToken(limit: 10)
        #expect(held.map(\.lineItemId).sorted() == ["in_2", "in_3"])
        #expect(held.count == 2, "rewritten in place, not a second version")

        // The app forwards a token of the customer active then: both are placed and reported with their days.
        let second = PaymentHarness.servicesToken(createdAt: start + 3_600_000, expiresAt: start + 365 * 86_400_000)
        #expect(try harness.forward(second, account: account).status == 201)
        #expect(eventually(within: 30) { (try? ledger.reports.lineItemsAwaitingToken(limit: 10).isEmpty) == true })
        // `in_3` is dated a minute ahead of the server's clock: its report waits for that date.
        time.advance(seconds: 60)
        let latest = Dictionary(harness.reportedLineItems().map { ($0["lineItemId"] as? String ?? "", $0) }) { $1 }
        #expect(latest["in_2"]?["subscriptionDaysOfPaidService"] as? Int == Int(startDays))
        #expect(latest["in_3"]?["subscriptionDaysOfPaidService"] as? Int == Int(startDays) + 30)
        #expect(latest["in_3"]?["restatement"] == nil)
        #expect(harness.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }
}
