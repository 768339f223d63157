import Domain
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// A paid sale linkout cannot make into Apple's line item (a payment link made by hand names no product) is
/// recorded and counted for a person; its token is never reported `NO_LINE_ITEM`, which would tell Apple that
/// nobody paid. A token of the same run without a sale is, so the planner did run.
@Suite("Payment flow: a sale without a line item")
struct SaleWithoutLineItemTests {
    @Test func aTokenWithASaleThatIsNoLineItemIsNotReportedAsWithout() throws {
        let harness = try PaymentHarness(provider: .stripe) { configuration in
            // Reported NO_LINE_ITEM at the first pass unless something keeps the token back.
            configuration.reporting.noLineItemAfterSeconds = 0
        }
        let paid = try harness.openCheckout()
        let quiet = try harness.openCheckout()
        // A session linkout did not start, led to the checkout by `client_reference_id`, without `product_id`.
        let completed = StripeEvents.sessionCompleted(
            id: "evt_by_hand",
            session: "cs_test_by_hand",
            checkout: paid,
            product: "",
            total: 2999,
            tax: 479,
            country: "DE",
            paymentIntent: "pi_by_hand"
        ).replacingOccurrences(of: #","product_id":"""#, with: "")
        #expect(try harness.deliver(completed).status == 200)
        try harness.waitForEvents()
        let ledger = harness.live.application.ledger
        let purchase = try ledger.payments.purchase(id: "cs_test_by_hand")
        #expect(purchase?.status == .paid && purchase?.isReported == false)
        #expect(harness.reportedLineItems().isEmpty)
        let reported = harness.apple.apple.received.compactMap { $0.bodyObject }
        #expect(reported.count == 1, "\(reported)")
        #expect(reported.first?["status"] as? String == "NO_LINE_ITEM")
        #expect(
            String(describing: reported.first?["externalPurchaseId"] ?? "") == quiet.externalPurchaseId,
            "only the token without a sale"
        )
        #expect(try ledger.reports.reports(for: ExternalPurchaseID(paid.externalPurchaseId)).isEmpty)
        // The close keeps the month open on it, and says what settles it.
        let now = Clock.system.nowMilliseconds()
        let close = try MonthlyClose(ledger: ledger, configuration: harness.live.application.configuration).report(
            month: CloseMonth(containing: now),
            environment: .sandbox,
            now: now,
            status: .running
        )
        let entry = close.outstandingList.first { $0.externalPurchaseId.rawValue == paid.externalPurchaseId }
        #expect(entry?.state == "sale_without_line_item", "\(close.outstandingList)")
        #expect(entry?.action.contains("POST /v1/tokens/{id}/line-items") == true)
    }
}
