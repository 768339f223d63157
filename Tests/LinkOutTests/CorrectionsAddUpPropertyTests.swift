import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// Whatever happens to a purchase (refunds, partial refunds, chargebacks, reversals, the operator's
/// retractions), what Apple holds adds up to what the developer kept, and every version Apple gets is
/// consistent with those before it. Random sequences, seeded (a failure names its seed), bounded, through the
/// real webhook routes of both providers and a fake Apple that checks every rule linkout knows; the PostgreSQL
/// pass runs them again on that engine.
/// The sequences run one at a time: each is a server of its own, and twenty at once on the shared PostgreSQL
/// would take more connections than it allows.
@Suite("Corrections add up", .serialized)
struct CorrectionsAddUpPropertyTests {
    /// Money that went back, as the test's model sees it: a slice stands at Apple until reversed or retracted,
    /// and stays gone at the provider unless reversed (an operator's retraction is Apple's side only).
    struct Slice {
        var lineItemId: String
        var amount: Int64
        var isChargeback: Bool
        var standing = true
        var returned = true
    }

    static let paid: Int64 = 2999
    static let sequences = 10
    static let steps = 8

    /// What Apple holds for the buy, worked out here from what it received and nothing of linkout's: the latest
    /// version of each line item counts, a retracted one (`erroneouslySubmitted`) for nothing.
    struct ApplesView {
        /// The buy less its refunds, tax included.
        var kept: Int64 = 0
        /// The buy's tax-exclusive amount less its refunds'.
        var net: Int64 = 0
    }

    /// Apple's view after each item it received (in order), for every item about the buy.
    static func applesViews(_ harness: PaymentHarness, buy: String) -> [(item: LineItem, view: ApplesView)] {
        var latest: [String: LineItem] = [:]
        var order: [String] = []
        var views: [(item: LineItem, view: ApplesView)] = []
        let items = harness.apple.apple.received.compactMap(\.report).filter { $0.status == .lineItem }
            .flatMap { $0.lineItems ?? [] }
        for item in items {
            let id = item.common.lineItemId
            if latest[id.rawValue] == nil { order.append(id.rawValue) }
            latest[id.rawValue] = item
            var view = ApplesView()
            for standing in order.compactMap({ latest[$0] }) where standing.common.erroneouslySubmitted != true {
                switch standing {
                case .refund(let refund) where refund.referenceLineItemId.rawValue == buy:
                    view.kept -= refund.amountTaxInclusive
                    view.net -= refund.amountTaxExclusive
                case .oneTimeBuy(let bought) where bought.lineItemId.rawValue == buy:
                    view.kept += bought.amountTaxInclusive
                    view.net += bought.amountTaxExclusive
                default: break
                }
            }
            if case .refund(let refund) = item, refund.referenceLineItemId.rawValue != buy { continue }
            if item.isBuy, id.rawValue != buy { continue }
            views.append((item, view))
        }
        return views
    }

    static func check(_ harness: PaymentHarness, buy: String, slices: [Slice], seed: UInt64) throws {
        let views = applesViews(harness, buy: buy)
        let final = views.last?.view ?? ApplesView()
        let returned = slices.filter(\.standing).reduce(Int64(0)) { $0 + $1.amount }
        #expect(
            final.kept == (paid - returned) * 10,
            "seed \(seed): Apple holds \(final.kept), kept \(paid - returned)"
        )
        // Every version Apple got states the net that stands once it is in (Apple's "net after all refunds and
        // restatements"), never below zero.
        for (item, view) in views {
            #expect(
                item.common.netAmountTaxExclusive == max(0, view.net),
                "seed \(seed): \(item.common.lineItemId) says \(item.common.netAmountTaxExclusive), \(view.net) stands"
            )
        }
        let refused = harness.apple.apple.received.flatMap(\.problems)
        #expect(refused.isEmpty, "seed \(seed): \(refused)")
        let ledger = harness.live.application.ledger
        let setAside = try ledger.reports.needingAttention(limit: 5).flatMap(\.lineItems).map {
            "\($0.body) \($0.correction ?? "")"
        }
        #expect(setAside.isEmpty, "seed \(seed): set aside: \(setAside)")
        #expect(try ledger.reports.reports(limit: 100, state: .pending).isEmpty, "seed \(seed)")
    }

    /// Retracts a random standing refund Apple accepted, as an operator would; true when one was.
    static func retractOne(
        _ harness: PaymentHarness,
        token: String,
        slices: inout [Slice],
        using random: inout SplitMix64
    ) throws -> Bool {
        let candidates = slices.indices.filter { slices[$0].standing && !slices[$0].isChargeback }
        guard let index = candidates.randomElement(using: &random) else { return false }
        _ = try ReportActions(ledger: harness.live.application.ledger).retract(
            ExternalPurchaseID(token),
            lineItemId: LineItemID(slices[index].lineItemId)
        )
        slices[index].standing = false
        return true
    }

    @Test(arguments: 0..<sequences)
    func paddleRefundsChargebacksReversalsAndRetractions(_ sequence: Int) throws {
        let seed = UInt64(0x5EED_0000 + sequence)
        var random = SplitMix64(seed: seed)
        let harness = try PaddleFlowTests.Harness()
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.lifetime", checkout)
        let start = Clock.system.nowSeconds() - 60
        var tick: Int64 = 0
        func deliver(_ body: String) throws {
            #expect(try harness.deliver(body).status == 200)
            try harness.payments.waitForEvents()
            _ = harness.payments.reportedLineItems()
        }
        try deliver(
            PaddleFixtures.transaction(
                eventId: "evt_buy",
                occurredAt: PaddleFlowTests.time(start),
                transactionId: transaction,
                currency: "EUR",
                totals: .init(subtotal: 2520, tax: 479, total: Self.paid),
                customData: harness.custom(checkout, product: "pro.lifetime")
            )
        )
        var slices: [Slice] = []
        for step in 0..<Self.steps {
            tick += 1
            let left = Self.paid - slices.filter(\.returned).reduce(0) { $0 + $1.amount }
            let reversible = slices.indices.filter { slices[$0].standing && slices[$0].isChargeback }
            switch Int.random(in: 0..<4, using: &random) {
            case 0 where !reversible.isEmpty:
                let index = try #require(reversible.randomElement(using: &random))
                try deliver(
                    PaddleFixtures.adjustment(
                        type: "adjustment.created",
                        eventId: "evt_rev\(step)",
                        occurredAt: PaddleFlowTests.time(start + tick),
                        adjustmentId: "adj_rev\(step)",
                        action: "chargeback_reverse",
                        status: "approved",
                        transactionId: transaction,
                        currency: "EUR",
                        total: slices[index].amount,
                        tax: 0
                    )
                )
                // Paddle's reversal names no chargeback: the first standing one of its amount is withdrawn.
                let first = try #require(
                    slices.indices.first {
                        slices[$0].standing && slices[$0].isChargeback
                            && slices[$0].amount == slices[index].amount
                    }
                )
                (slices[first].standing, slices[first].returned) = (false, false)
            case 1 where slices.contains { $0.standing && !$0.isChargeback }:
                _ = try Self.retractOne(
                    harness.payments,
                    token: checkout.externalPurchaseId,
                    slices: &slices,
                    using: &random
                )
                _ = harness.payments.reportedLineItems()
            default:
                guard left > 0 else { continue }
                let amount = Int64.random(in: 1...left, using: &random)
                let isChargeback = Bool.random(using: &random)
                let id = isChargeback ? "adj_cb\(step)" : "adj_rf\(step)"
                try deliver(
                    PaddleFixtures.adjustment(
                        type: "adjustment.created",
                        eventId: "evt_\(id)",
                        occurredAt: PaddleFlowTests.time(start + tick),
                        adjustmentId: id,
                        action: isChargeback ? "chargeback" : "refund",
                        status: "approved",
                        transactionId: transaction,
                        currency: "EUR",
                        total: amount,
                        tax: amount * 479 / Self.paid
                    )
                )
                slices.append(
                    Slice(
                        lineItemId: "\(transaction):\(isChargeback ? "dispute" : "refund"):\(id)",
                        amount: amount,
                        isChargeback: isChargeback
                    )
                )
            }
        }
        try Self.check(harness.payments, buy: transaction, slices: slices, seed: seed)
    }

    @Test(arguments: 0..<sequences)
    func stripeRefundsADisputeAndRetractions(_ sequence: Int) throws {
        let seed = UInt64(0x57_0000 + sequence)
        var random = SplitMix64(seed: seed)
        let harness = try PaymentHarness(provider: .stripe)
        let checkout = try harness.openCheckout()
        #expect(try harness.choose(checkout, product: "pro.lifetime", currency: "EUR").status == 303)
        func deliver(_ body: String) throws {
            #expect(try harness.deliver(body).status == 200)
            try harness.waitForEvents()
            _ = harness.reportedLineItems()
        }
        try deliver(
            StripeEvents.sessionCompleted(
                id: "evt_buy",
                session: "cs_test_fake1",
                checkout: checkout,
                product: "pro.lifetime",
                total: Self.paid,
                tax: 479,
                country: "DE",
                paymentIntent: "pi_1"
            )
        )
        var slices: [Slice] = []
        // Stripe's `amount_refunded` is cumulative and never goes down; an operator's retraction is Apple's side
        // only.
        var refunded: Int64 = 0
        for step in 0..<Self.steps {
            switch Int.random(in: 0..<3, using: &random) {
            case 0 where slices.contains { $0.standing }:
                _ = try Self.retractOne(harness, token: checkout.externalPurchaseId, slices: &slices, using: &random)
                _ = harness.reportedLineItems()
            default:
                guard refunded < Self.paid else { continue }
                let amount = Int64.random(in: 1...(Self.paid - refunded), using: &random)
                refunded += amount
                let event = StripeEvents.refunded(
                    id: "evt_rf\(step)",
                    charge: "ch_1",
                    paymentIntent: "pi_1",
                    amount: Self.paid,
                    refunded: refunded
                )
                try deliver(event)
                // A redelivery changes nothing.
                if Bool.random(using: &random) { try deliver(event) }
                slices.append(Slice(lineItemId: "ch_1:refund:\(refunded)", amount: amount, isChargeback: false))
            }
        }
        // What is left may be charged back in the end (Stripe refunds nothing more on a disputed charge).
        if refunded < Self.paid, Bool.random(using: &random) {
            try deliver(
                PaymentChangeFlowTests.disputeClosed(
                    id: "evt_lost",
                    dispute: "dp_1",
                    status: "lost",
                    amount: Self.paid - refunded
                )
            )
            slices.append(Slice(lineItemId: "ch_1:dispute:dp_1", amount: Self.paid - refunded, isChargeback: true))
        }
        try Self.check(harness, buy: "cs_test_fake1", slices: slices, seed: seed)
    }
}
