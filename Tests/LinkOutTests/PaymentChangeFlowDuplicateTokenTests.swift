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
        let completed = StripeEvents.sessionCompleted(
            id: "evt_late",
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.monthly",
            mode: "subscription",
            total: 399,
            tax: 0,
            country: "DE",
            paymentIntent: "pi_late",
            subscription: "sub_1",
            created: Clock.system.nowSeconds()
        )
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
}
