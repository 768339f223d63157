import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// A sale paid on a token already reported `DUPLICATE_TOKEN` (a person who came back to an older checkout page of
/// theirs): Apple was told that token is "a token you recognise but are not using to report transactions", so the
/// sale goes on the customer's token that carries them, never on the duplicate.
@Suite("Payment flow: a sale on a token reported DUPLICATE_TOKEN")
struct PaymentChangeFlowDuplicateTokenTests {
    /// Stripe's completion of the monthly subscription bought on `checkout` (3.99, in Germany), made now.
    static func monthlyPaid(
        _ checkout: PaymentHarness.Checkout,
        event: String,
        paymentIntent: String,
        subscription: String
    ) -> String {
        StripeEvents.sessionCompleted(
            id: event,
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.monthly",
            mode: "subscription",
            total: 399,
            tax: 0,
            country: "DE",
            paymentIntent: paymentIntent,
            subscription: subscription,
            created: Clock.system.nowSeconds()
        )
    }

    @Test func theSaleGoesOnTheCustomersOtherToken() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let now = Clock.system.nowMilliseconds()
        let tokens = (0..<2).map { _ in
            PaymentHarness.servicesToken(createdAt: now - 10_000, expiresAt: now + 3_600_000)
        }
        for token in tokens {
            #expect(try harness.forward(token, account: PaymentHarness.account).status == 201)
        }
        // Two tokens of one customer active at once: the planner reports one of them DUPLICATE_TOKEN.
        let apple = harness.apple.apple
        #expect(
            eventually(within: 30) {
                harness.live.application.reporting.tick()
                return apple.received.contains { $0.report?.status == .duplicateToken }
            }
        )
        let duplicate = try #require(apple.received.first { $0.report?.status == .duplicateToken }?.report)
        let kept = try #require(tokens.first { $0.externalPurchaseId != duplicate.externalPurchaseId })
        let paidOn = try #require(tokens.first { $0.externalPurchaseId == duplicate.externalPurchaseId })

        let checkout = try harness.openCheckout(token: paidOn)
        #expect(try harness.choose(checkout, product: "pro.monthly", currency: "EUR").status == 303)
        let completed = Self.monthlyPaid(checkout, event: "evt_late", paymentIntent: "pi_late", subscription: "sub_1")
        #expect(try harness.deliver(completed).status == 200)
        try harness.waitForEvents()

        let ledger = harness.live.application.ledger
        #expect(try ledger.reports.lineItems(for: duplicate.externalPurchaseId).isEmpty)
        #expect(try ledger.reports.lineItems(for: kept.externalPurchaseId).map(\.lineItemId) == ["cs_test_fake1"])
        let outcome = try ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10).first {
            $0.eventId == "evt_late"
        }?.outcome
        #expect(outcome?.contains("on token \(kept.externalPurchaseId)") == true, "\(outcome ?? "none")")
        // And Apple hears of it on the kept token.
        let sent = harness.reportedLineItems().compactMap { $0["lineItemId"] as? String }
        #expect(sent == ["cs_test_fake1"])
        #expect(
            apple.received.contains {
                $0.report?.externalPurchaseId == kept.externalPurchaseId && $0.report?.status == .lineItem
            }
        )
    }

    /// A token with a payment under way is not reported `DUPLICATE_TOKEN` while the payment may still complete: it
    /// was, and then its sale went to Apple on it too (a token Apple was told carries no transactions). Once paid,
    /// it is the token the customer's transactions go on, and the other is the duplicate.
    @Test func aTokenBeingPaidOnIsNotReportedADuplicate() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let now = Clock.system.nowMilliseconds()
        let tokens = (0..<2).map { _ in
            PaymentHarness.servicesToken(createdAt: now - 10_000, expiresAt: now + 3_600_000)
        }
        for token in tokens {
            #expect(try harness.forward(token, account: PaymentHarness.account).status == 201)
        }
        // The one seen later would be the duplicate (two forwards in one millisecond: the greater id); the person
        // pays on it.
        let ledger = harness.live.application.ledger
        let seen = try tokens.map { token throws -> (Int64, ExternalPurchaseID, ExternalPurchaseToken) in
            let stored = try #require(try ledger.tokens.token(token.externalPurchaseId))
            return (stored.firstSeenAt, token.externalPurchaseId, token)
        }
        let ordered = seen.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
        let (first, later) = (ordered[0], ordered[1])
        let checkout = try harness.openCheckout(token: later)
        #expect(try harness.choose(checkout, product: "pro.monthly", currency: "EUR").status == 303)
        let apple = harness.apple.apple
        for _ in 0..<3 { harness.live.application.reporting.tick() }
        #expect(!apple.received.contains { $0.report?.status == .duplicateToken }, "\(apple.received.count)")

        let completed = Self.monthlyPaid(
            checkout,
            event: "evt_paid_on_second",
            paymentIntent: "pi_second",
            subscription: "sub_2"
        )
        #expect(try harness.deliver(completed).status == 200)
        try harness.waitForEvents()
        #expect(
            eventually(within: 30) {
                harness.live.application.reporting.tick()
                return apple.received.contains { $0.report?.status == .duplicateToken }
            }
        )
        let reports = apple.received.compactMap(\.report)
        #expect(reports.filter { $0.externalPurchaseId == later.externalPurchaseId }.map(\.status) == [.lineItem])
        #expect(reports.filter { $0.externalPurchaseId == first.externalPurchaseId }.map(\.status) == [.duplicateToken])
    }
}
