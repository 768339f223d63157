import Domain
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// A Paddle sale held for its exchange rate waits without asking Paddle again: every pass of the processor (one
/// follows each webhook) looked at every held sale, and completing one from Paddle's API asked for its customer's
/// country each time (300 calls for 50 unrelated webhooks with six sales held; Paddle allows 240 a minute).
@Suite("Paddle: a held sale")
struct PaddleHeldSaleTests {
    @Test func aSaleHeldForItsRateAsksPaddleForItsCountryOnceWhateverArrivesMeanwhile() throws {
        let harness = try PaddleFlowTests.Harness()
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.lifetime", checkout)
        // KWD, for which no rate is configured: the sale is recorded and its line item held.
        let completed = PaddleFixtures.transaction(
            eventId: "evt_01kwd",
            occurredAt: PaddleFlowTests.time(Clock.system.nowSeconds() - 1),
            transactionId: transaction,
            currency: "KWD",
            totals: .init(subtotal: 9000, tax: 0, total: 9000),
            customData: harness.custom(checkout, product: "pro.lifetime")
        )
        #expect(try harness.deliver(completed).status == 200)
        try harness.payments.waitForEvents()
        let outcome = PaddleChargebackReversalTests.outcome(in: harness.live.application.ledger, "evt_01kwd")
        #expect(outcome?.contains("held") == true, "\(outcome ?? "not processed")")
        let addressRead = "GET /transactions/\(transaction)?include=address"
        #expect(harness.paddle.requests.filter { $0 == addressRead }.count == 1)
        // Unrelated notifications, each followed by a pass over the held sales.
        for index in 0..<5 {
            let other = PaddleFixtures.transaction(
                type: "transaction.payment_failed",
                eventId: "evt_01other\(index)",
                occurredAt: PaddleFlowTests.time(Clock.system.nowSeconds()),
                transactionId: "txn_01other\(index)",
                status: "ready",
                currency: "EUR",
                totals: .init(subtotal: 2520, tax: 479, total: 2999),
                customData: [:]
            )
            #expect(try harness.deliver(other).status == 200)
            try harness.payments.waitForEvents()
        }
        #expect(harness.paddle.requests.filter { $0 == addressRead }.count == 1, "\(harness.paddle.requests)")
        #expect(harness.payments.reportedLineItems().isEmpty, "still held")
    }
}
