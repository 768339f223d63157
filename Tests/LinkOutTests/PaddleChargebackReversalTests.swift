import Dispatch
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

/// A chargeback Paddle reverses (the money went back to the seller) withdraws the chargeback's `REFUND` at Apple
/// the way an operator's `linkout report retract` does: the same `lineItemId` again, a restatement marked
/// `erroneouslySubmitted`, its net recalculated without it (the buy less the refunds that still stand).
@Suite("Paddle chargeback reversal")
struct PaddleChargebackReversalTests {
    /// An approved adjustment of `transaction` in euros, its event named after it.
    static func adjustment(
        of transaction: String,
        _ id: String,
        _ action: String,
        _ total: Int64,
        _ tax: Int64,
        at: Int64
    ) -> String {
        PaddleFixtures.adjustment(
            type: "adjustment.created",
            eventId: "evt_" + id,
            occurredAt: PaddleFlowTests.time(at),
            adjustmentId: id,
            action: action,
            status: "approved",
            transactionId: transaction,
            currency: "EUR",
            total: total,
            tax: tax
        )
    }

    /// A lifetime purchase of 29.99 (4.79 tax) opened and bought, and the event that completes it (dated `at`).
    static func sale(_ harness: PaddleFlowTests.Harness, event: String, at: Int64) throws
        -> (transaction: String, completed: String)
    {
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.lifetime", checkout)
        let completed = PaddleFixtures.transaction(
            eventId: event,
            occurredAt: PaddleFlowTests.time(at),
            transactionId: transaction,
            currency: "EUR",
            totals: .init(subtotal: 2520, tax: 479, total: 2999),
            customData: harness.custom(checkout, product: "pro.lifetime")
        )
        return (transaction, completed)
    }

    /// The outcome recorded for the payment event `id`, if it was processed.
    static func outcome(in ledger: Ledger, _ id: String) -> String? {
        (try? ledger.payments.paymentEvents(unprocessedOnly: false, limit: 50))?.first { $0.eventId == id }?.outcome
    }

    /// Delivers each body, and lets it be processed and reported before the next.
    static func deliverInTurn(_ harness: PaddleFlowTests.Harness, _ bodies: [String]) throws {
        for body in bodies {
            #expect(try harness.deliver(body).status == 200)
            try harness.payments.waitForEvents()
            _ = harness.payments.reportedLineItems()
        }
    }

    /// A signed refund whose amounts linkout cannot read is answered 200 (Paddle would send the same bytes again)
    /// and made into no line item: the operator hears of it from the log and from a counter the alert rules watch
    /// (it was one log line and nothing else).
    @Test func aRefundLinkoutCannotReadIsCountedForAPerson() throws {
        let harness = try PaddleFlowTests.Harness()
        let now = Clock.system.nowSeconds()
        let (transaction, completed) = try Self.sale(harness, event: "evt_12done", at: now - 9)
        try Self.deliverInTurn(harness, [completed])
        let metric = #"linkout_payment_events_needing_a_person_total{reason="not_reportable"}"#
        let scrape = { String(decoding: try harness.live.get("/metrics").body, as: UTF8.self) }
        #expect(try scrape().contains(metric + " 0"))
        let unreadable = Self.adjustment(of: transaction, "adj_12bad", "refund", 1000, 160, at: now - 1)
            .replacingOccurrences(of: #""total":"1000""#, with: #""total":"10.5""#)
        try Self.deliverInTurn(harness, [unreadable])
        #expect(harness.payments.reportedLineItems().count == 1)
        #expect(try scrape().contains(metric + " 1"))
    }

    @Test func aReversedChargebackRetractsItsRefundAtApple() throws {
        let harness = try PaddleFlowTests.Harness()
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.lifetime", checkout)
        let now = Clock.system.nowSeconds()
        func adjustment(_ event: String, _ id: String, _ action: String, _ total: Int64, _ tax: Int64, at: Int64)
            -> String
        {
            PaddleFixtures.adjustment(
                type: "adjustment.created",
                eventId: event,
                occurredAt: PaddleFlowTests.time(at),
                adjustmentId: id,
                action: action,
                status: "approved",
                transactionId: transaction,
                currency: "EUR",
                total: total,
                tax: tax
            )
        }
        let completed = PaddleFixtures.transaction(
            eventId: "evt_06done",
            occurredAt: PaddleFlowTests.time(now - 9),
            transactionId: transaction,
            currency: "EUR",
            totals: .init(subtotal: 2520, tax: 479, total: 2999),
            customData: harness.custom(checkout, product: "pro.lifetime")
        )
        // Two chargebacks of the transaction; the one of 1000 is reversed (Paddle's reversal names no chargeback:
        // the amount picks it).
        for body in [
            completed,
            adjustment("evt_06cb1", "adj_06cb1", "chargeback", 1000, 160, at: now - 8),
            adjustment("evt_06cb2", "adj_06cb2", "chargeback", 500, 80, at: now - 7),
        ] {
            #expect(try harness.deliver(body).status == 200)
            try harness.payments.waitForEvents()
        }
        let reported = harness.payments.reportedLineItems()
        #expect(reported.count == 3)
        // A reversal in another currency than the payment's is none of its chargebacks: nothing is withdrawn
        // (it once withdrew the chargeback of the same amount in euros).
        let foreign = PaddleFixtures.adjustment(
            type: "adjustment.created",
            eventId: "evt_06usd",
            occurredAt: PaddleFlowTests.time(now - 2),
            adjustmentId: "adj_06usd",
            action: "chargeback_reverse",
            status: "approved",
            transactionId: transaction,
            currency: "USD",
            total: 1000,
            tax: 160
        )
        #expect(try harness.deliver(foreign).status == 200)
        try harness.payments.waitForEvents()
        #expect(harness.payments.reportedLineItems().count == 3)
        let reversal = adjustment("evt_06rev", "adj_06rev", "chargeback_reverse", 1000, 160, at: now - 1)
        #expect(try harness.deliver(reversal).status == 200)
        try harness.payments.waitForEvents()
        // Delivered again under another event id (an update of the same reversal): nothing more.
        let again = adjustment("evt_06rev2", "adj_06rev", "chargeback_reverse", 1000, 160, at: now)
        #expect(try harness.deliver(again).status == 200)
        try harness.payments.waitForEvents()
        let items = harness.payments.reportedLineItems()
        #expect(items.count == 4)
        let retraction = try #require(items.last)
        // Its net is the buy's less the refunds that still stand: the other chargeback only.
        let standing = try #require(
            reported.first { $0["lineItemId"] as? String == "\(transaction):dispute:adj_06cb2" }?["amountTaxExclusive"]
                as? Int
        )
        #expect(
            try PaymentHarness.canonical(retraction, zeroing: ["netAmountTaxExclusive"])
                == #"{"amountTaxExclusive":8400,"amountTaxInclusive":10000,"creationDate":0,"erroneouslySubmitted":true,"eventType":"REFUND","lineItemId":"\#(transaction):dispute:adj_06cb1","netAmountTaxExclusive":0,"pricingCurrency":"EUR","referenceLineItemId":"\#(transaction)","reportingCurrency":"EUR","restatement":true,"taxAmount":1600,"taxCountry":"DEU"}"#
        )
        #expect(retraction["netAmountTaxExclusive"] as? Int == 25200 - standing)
        // The retraction repeats the chargeback's REFUND as Apple holds it, creation date included.
        let chargeback = try #require(
            reported.first { $0["lineItemId"] as? String == "\(transaction):dispute:adj_06cb1" }
        )
        #expect(retraction["creationDate"] as? Int64 == chargeback["creationDate"] as? Int64)
        let event = try harness.live.application.ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10)
            .first { $0.eventId == "evt_06rev" }
        #expect(event?.outcome == "chargeback reversed; line item \(transaction):dispute:adj_06cb1 retracted")
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// Paddle's notifications come in no set order: a reversal delivered before its chargeback waits for it, and
    /// the chargeback's REFUND is then withdrawn as if they had come in order (applied at once, the reversal found
    /// nothing to withdraw and the chargeback stood at Apple for good).
    @Test func aReversalDeliveredBeforeItsChargebackWaitsForIt() throws {
        let time = ManualClock()
        let harness = try PaddleFlowTests.Harness(clock: time.clock)
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.lifetime", checkout)
        let now = Clock.system.nowSeconds()
        func adjustment(_ event: String, _ id: String, _ action: String, at: Int64) -> String {
            PaddleFixtures.adjustment(
                type: "adjustment.created",
                eventId: event,
                occurredAt: PaddleFlowTests.time(at),
                adjustmentId: id,
                action: action,
                status: "approved",
                transactionId: transaction,
                currency: "EUR",
                total: 1000,
                tax: 160
            )
        }
        let completed = PaddleFixtures.transaction(
            eventId: "evt_07done",
            occurredAt: PaddleFlowTests.time(now - 9),
            transactionId: transaction,
            currency: "EUR",
            totals: .init(subtotal: 2520, tax: 479, total: 2999),
            customData: harness.custom(checkout, product: "pro.lifetime")
        )
        #expect(try harness.deliver(completed).status == 200)
        try harness.payments.waitForEvents()
        // A plain refund of the same amount first: recorded like a chargeback, it is not the one reversed.
        #expect(try harness.deliver(adjustment("evt_07ref", "adj_07ref", "refund", at: now - 7)).status == 200)
        try harness.payments.waitForEvents()
        let reversal = adjustment("evt_07rev", "adj_07rev", "chargeback_reverse", at: now - 1)
        #expect(try harness.deliver(reversal).status == 200)
        let ledger = harness.live.application.ledger
        #expect(eventually(within: 30) { Self.outcome(in: ledger, "evt_07rev")?.hasPrefix("waiting:") == true })
        #expect(try harness.deliver(adjustment("evt_07cb", "adj_07cb", "chargeback", at: now - 5)).status == 200)
        // The chargeback's REFUND goes to Apple; a later pass of the events then finds it to withdraw.
        #expect(eventually(within: 30) { Self.outcome(in: ledger, "evt_07cb")?.contains("queued for Apple") == true })
        _ = harness.payments.reportedLineItems()
        // A waiting event is put off (30 s at first); past that, the next event's pass takes it again.
        time.advance(seconds: 60)
        let other = adjustment("evt_07other", "adj_07other", "credit", at: now)
        #expect(try harness.deliver(other).status == 200)
        #expect(
            eventually(within: 30) {
                Self.outcome(in: ledger, "evt_07rev")
                    == "chargeback reversed; line item \(transaction):dispute:adj_07cb retracted"
            },
            "\(Self.outcome(in: ledger, "evt_07rev") ?? "none")"
        )
        let retraction = try #require(harness.payments.reportedLineItems().last)
        #expect(retraction["lineItemId"] as? String == "\(transaction):dispute:adj_07cb")
        #expect(retraction["erroneouslySubmitted"] as? Bool == true)
    }

    /// A reversal can wait longer than the three days other events get for Apple to take its chargeback's REFUND
    /// (Apple answering 503 for days, reporting blocked): it waits behind the purchase's token, never given up, and
    /// Apple's acceptance wakes it (given up, the chargeback stood at Apple for good).
    @Test func aReversalWaitingLongerThanThreeDaysForAppleIsNotGivenUp() throws {
        let time = ManualClock()
        let harness = try PaddleFlowTests.Harness(clock: time.clock)
        let now = Clock.system.nowSeconds()
        let (transaction, completed) = try Self.sale(harness, event: "evt_11done", at: now - 9)
        func adjustment(_ id: String, _ action: String, at: Int64) -> String {
            Self.adjustment(of: transaction, id, action, 1000, 160, at: at)
        }
        try Self.deliverInTurn(harness, [completed])
        let ledger = harness.live.application.ledger
        // Apple answers 503 for the chargeback's report until told otherwise.
        let chargeback = "\(transaction):dispute:adj_11cb"
        let appleDown = Mutex(true)
        harness.payments.apple.apple.respond { received in
            let carries = received.report?.lineItems?.contains { $0.common.lineItemId.rawValue == chargeback } == true
            return carries && appleDown.withLock { $0 } ? .respond(status: 503) : nil
        }
        #expect(try harness.deliver(adjustment("adj_11cb", "chargeback", at: now - 5)).status == 200)
        #expect(
            eventually(within: 30) { Self.outcome(in: ledger, "evt_adj_11cb")?.contains("queued for Apple") == true }
        )
        #expect(try harness.deliver(adjustment("adj_11rev", "chargeback_reverse", at: now - 1)).status == 200)
        #expect(eventually(within: 30) { Self.outcome(in: ledger, "evt_adj_11rev")?.hasPrefix("waiting:") == true })

        // Four days on, the reversal is tried again and still waits.
        time.advance(seconds: 4 * 86_400)
        let later = Clock.system.nowSeconds() + 4 * 86_400
        #expect(try harness.deliver(adjustment("adj_11other", "credit", at: now), timestamp: later).status == 200)
        #expect(eventually(within: 30) { Self.outcome(in: ledger, "evt_adj_11other") != nil })
        #expect(
            Self.outcome(in: ledger, "evt_adj_11rev")?.hasPrefix("waiting:") == true,
            "\(Self.outcome(in: ledger, "evt_adj_11rev") ?? "none")"
        )

        // Apple takes the chargeback's REFUND; its acceptance makes the reversal due, and it withdraws it.
        appleDown.withLock { $0 = false }
        _ = harness.payments.reportedLineItems()
        #expect(try harness.deliver(adjustment("adj_11more", "credit", at: now), timestamp: later).status == 200)
        #expect(
            eventually(within: 30) {
                Self.outcome(in: ledger, "evt_adj_11rev") == "chargeback reversed; line item \(chargeback) retracted"
            },
            "\(Self.outcome(in: ledger, "evt_adj_11rev") ?? "none")"
        )
        let retraction = try #require(harness.payments.reportedLineItems().last)
        #expect(retraction["lineItemId"] as? String == chargeback)
        #expect(retraction["erroneouslySubmitted"] as? Bool == true)
    }

    /// Apple refused the buy, and the chargeback's REFUND after it was set aside with it; the chargeback is then
    /// reversed. The reversal settles the set-aside REFUND (nothing is left to report), and
    /// restating the buy sends the buy alone (it sent the REFUND as well: money back with the seller reported as
    /// refunded to the customer).
    @Test func aReversedChargebackSetAsideWithItsBuyIsNotSentWhenTheBuyIsRestated() throws {
        let harness = try PaddleFlowTests.Harness()
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.lifetime", checkout)
        let now = Clock.system.nowSeconds()
        let completed = PaddleFixtures.transaction(
            eventId: "evt_12done",
            occurredAt: PaddleFlowTests.time(now - 9),
            transactionId: transaction,
            currency: "EUR",
            totals: .init(subtotal: 2520, tax: 479, total: 2999),
            customData: harness.custom(checkout, product: "pro.lifetime")
        )
        // Apple refuses the buy's first report, while the chargeback comes: its REFUND, queued behind the buy,
        // is set aside before it is sent (its buy is not at Apple).
        let refusals = Mutex(0)
        let chargebackQueued = DispatchSemaphore(value: 0)
        harness.payments.apple.apple.respond { received in
            guard received.report?.lineItems?.first?.common.lineItemId.rawValue == transaction,
                refusals.withLock({ count in
                    defer { count += 1 }
                    return count == 0
                })
            else { return nil }
            _ = chargebackQueued.wait(timeout: .now() + .seconds(10))
            return FakeAppleServer.rejection([FakeAppleServer.AppleError.incorrectNetAmount(transaction)])
        }
        #expect(try harness.deliver(completed).status == 200)
        try harness.payments.waitForEvents()
        #expect(
            try harness.deliver(Self.adjustment(of: transaction, "adj_12cb", "chargeback", 1000, 160, at: now - 8))
                .status == 200
        )
        try harness.payments.waitForEvents()
        chargebackQueued.signal()
        _ = harness.payments.reportedLineItems()
        let ledger = harness.live.application.ledger
        let token = ExternalPurchaseID(rawValue: checkout.externalPurchaseId)
        let buy = LineItemID(transaction)
        let chargeback = LineItemID("\(transaction):dispute:adj_12cb")
        func setAside() throws -> [LineItemID] {
            try ledger.reports.lineItems(for: token).filter(\.needsCorrection).map(\.lineItemId)
        }
        let stored = try ledger.reports.lineItems(for: token).map { "\($0.lineItemId) \($0.correction ?? "-")" }
        #expect(try setAside() == [buy, chargeback], "\(stored)")

        try Self.deliverInTurn(
            harness,
            [Self.adjustment(of: transaction, "adj_12rev", "chargeback_reverse", 1000, 160, at: now - 6)]
        )
        let reversal = try ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10)
            .first { $0.eventId == "evt_adj_12rev" }
        #expect(
            reversal?.outcome?.contains("set-aside REFUND \(chargeback) settled") == true,
            "\(reversal?.outcome ?? "none")"
        )
        #expect(try setAside() == [buy])

        let held = try #require(try ledger.reports.lineItems(for: token).last { $0.lineItemId == buy })
        let restated = try ReportActions(ledger: ledger).restate(token, lineItemId: buy, body: held.body)
        #expect(!restated.detail.contains("checked again"), "\(restated.detail)")
        _ = harness.payments.reportedLineItems()
        let last = try #require(
            harness.payments.apple.apple.received.last?.bodyObject?["lineItems"] as? [[String: Any]]
        )
        #expect(last.map { $0["lineItemId"] as? String } == [transaction])
        #expect(try setAside().isEmpty)
    }

    /// A reversed chargeback gives the money back to the seller: a refund after it is a refund of money the
    /// seller holds again, reported in full (before, the purchase's refunded total kept the chargeback and the
    /// later refund was capped to nothing and dropped).
    @Test func aRefundAfterAReversedChargebackIsReported() throws {
        let harness = try PaddleFlowTests.Harness()
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.lifetime", checkout)
        let now = Clock.system.nowSeconds()
        func adjustment(_ id: String, _ action: String, _ total: Int64, _ tax: Int64, at: Int64) -> String {
            Self.adjustment(of: transaction, id, action, total, tax, at: at)
        }
        for body in [
            PaddleFixtures.transaction(
                eventId: "evt_07done",
                occurredAt: PaddleFlowTests.time(now - 9),
                transactionId: transaction,
                currency: "EUR",
                totals: .init(subtotal: 2520, tax: 479, total: 2999),
                customData: harness.custom(checkout, product: "pro.lifetime")
            ),
            adjustment("adj_07cb", "chargeback", 2999, 479, at: now - 8),
        ] {
            #expect(try harness.deliver(body).status == 200)
            try harness.payments.waitForEvents()
            _ = harness.payments.reportedLineItems()
        }
        for body in [
            adjustment("adj_07rev", "chargeback_reverse", 2999, 479, at: now - 7),
            adjustment("adj_07refund", "refund", 1000, 160, at: now - 6),
        ] {
            #expect(try harness.deliver(body).status == 200)
            try harness.payments.waitForEvents()
            _ = harness.payments.reportedLineItems()
        }
        let items = harness.payments.reportedLineItems()
        let refund = try #require(items.last)
        #expect(refund["lineItemId"] as? String == "\(transaction):refund:adj_07refund")
        #expect(refund["amountTaxInclusive"] as? Int == 10000)
        let exclusive = try #require(refund["amountTaxExclusive"] as? Int)
        #expect(refund["netAmountTaxExclusive"] as? Int == 25200 - exclusive)
        #expect(try harness.live.application.ledger.payments.purchase(id: transaction)?.status == .partiallyRefunded)
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// A chargeback of the whole payment after a partial refund took only what was left (24.99 of 29.99); its
    /// reversal gives back that, not the chargeback's amount: a refund after it has Paddle's tax and the net what
    /// stands (before, the refunded total fell to 0 and the next refund's tax was 2.40 instead of 1.60).
    @Test func aReversalGivesBackWhatTheChargebackTook() throws {
        let harness = try PaddleFlowTests.Harness()
        let now = Clock.system.nowSeconds()
        let (transaction, completed) = try Self.sale(harness, event: "evt_08done", at: now - 9)
        func adjustment(_ id: String, _ action: String, _ total: Int64, _ tax: Int64, at: Int64) -> String {
            Self.adjustment(of: transaction, id, action, total, tax, at: at)
        }
        try Self.deliverInTurn(
            harness,
            [
                completed,
                adjustment("adj_08ref1", "refund", 500, 80, at: now - 8),
                adjustment("adj_08cb", "chargeback", 2999, 479, at: now - 7),
                adjustment("adj_08rev", "chargeback_reverse", 2999, 479, at: now - 6),
                adjustment("adj_08ref2", "refund", 1000, 160, at: now - 5),
            ]
        )
        let refund = try #require(harness.payments.reportedLineItems().last)
        #expect(refund["lineItemId"] as? String == "\(transaction):refund:adj_08ref2")
        #expect(refund["amountTaxInclusive"] as? Int == 10000)
        #expect(refund["taxAmount"] as? Int == 1600)
        // 25.20 without tax, less the refunds that stand: 4.20 and 8.40.
        #expect(refund["netAmountTaxExclusive"] as? Int == 25200 - 4200 - 8400)
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// Paddle delivers in no set order: a refund of more than a standing chargeback left waits for the chargeback's
    /// reversal, then is reported in full (before, it was capped to nothing, marked recorded and lost for good).
    @Test func aRefundOfMoneyAChargebackTookWaitsForItsReversal() throws {
        let time = ManualClock()
        let harness = try PaddleFlowTests.Harness(clock: time.clock)
        let now = Clock.system.nowSeconds()
        let (transaction, completed) = try Self.sale(harness, event: "evt_09done", at: now - 9)
        func adjustment(_ id: String, _ action: String, _ total: Int64, _ tax: Int64, at: Int64) -> String {
            Self.adjustment(of: transaction, id, action, total, tax, at: at)
        }
        try Self.deliverInTurn(
            harness,
            [
                completed,
                adjustment("adj_09ref1", "refund", 500, 80, at: now - 8),
                adjustment("adj_09cb", "chargeback", 2499, 399, at: now - 7),
            ]
        )
        let ledger = harness.live.application.ledger
        #expect(try harness.deliver(adjustment("adj_09ref2", "refund", 1000, 160, at: now - 5)).status == 200)
        #expect(eventually(within: 30) { Self.outcome(in: ledger, "evt_adj_09ref2")?.hasPrefix("waiting:") == true })
        #expect(
            try harness.deliver(adjustment("adj_09rev", "chargeback_reverse", 2499, 399, at: now - 6)).status == 200
        )
        #expect(eventually(within: 30) { Self.outcome(in: ledger, "evt_adj_09rev")?.contains("retracted") == true })
        // A waiting event is put off (30 s at first); past that, the next event's pass takes it again.
        time.advance(seconds: 60)
        #expect(try harness.deliver(adjustment("adj_09other", "credit", 100, 16, at: now)).status == 200)
        #expect(
            eventually(within: 30) { Self.outcome(in: ledger, "evt_adj_09ref2")?.contains("queued for Apple") == true },
            "\(Self.outcome(in: ledger, "evt_adj_09ref2") ?? "none")"
        )
        let refund = try #require(
            harness.payments.reportedLineItems().first {
                $0["lineItemId"] as? String == "\(transaction):refund:adj_09ref2"
            }
        )
        #expect(refund["amountTaxInclusive"] as? Int == 10000)
        #expect(refund["taxAmount"] as? Int == 1600)
        #expect(refund["netAmountTaxExclusive"] as? Int == 25200 - 4200 - 8400)
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// A second chargeback of more than the first left (Paddle: the first was reversed before it, delivered after
    /// it) waits for that reversal, then goes to Apple whole. It was capped to what the first left, and the first's
    /// reversal never raised it: Apple was told the seller kept 20.00 where it kept 14.99.
    @Test func aChargebackOfMoreThanAStandingOneLeftWaitsForItsReversal() throws {
        let time = ManualClock()
        let harness = try PaddleFlowTests.Harness(clock: time.clock)
        let now = Clock.system.nowSeconds()
        let (transaction, completed) = try Self.sale(harness, event: "evt_11done", at: now - 9)
        func adjustment(_ id: String, _ action: String, _ total: Int64, _ tax: Int64, at: Int64) -> String {
            Self.adjustment(of: transaction, id, action, total, tax, at: at)
        }
        try Self.deliverInTurn(harness, [completed, adjustment("adj_11cbA", "chargeback", 2000, 319, at: now - 8)])
        let ledger = harness.live.application.ledger
        #expect(try harness.deliver(adjustment("adj_11cbC", "chargeback", 1500, 239, at: now - 6)).status == 200)
        #expect(eventually(within: 30) { Self.outcome(in: ledger, "evt_adj_11cbC")?.hasPrefix("waiting:") == true })
        #expect(
            try harness.deliver(adjustment("adj_11revA", "chargeback_reverse", 2000, 319, at: now - 7)).status == 200
        )
        #expect(eventually(within: 30) { Self.outcome(in: ledger, "evt_adj_11revA")?.contains("retracted") == true })
        // The reversal makes the chargeback waiting behind the token due at once.
        #expect(
            eventually(within: 30) { Self.outcome(in: ledger, "evt_adj_11cbC")?.contains("queued for Apple") == true },
            "\(Self.outcome(in: ledger, "evt_adj_11cbC") ?? "none")"
        )
        let chargeback = try #require(
            harness.payments.reportedLineItems().last {
                $0["lineItemId"] as? String == "\(transaction):dispute:adj_11cbC"
            }
        )
        #expect(chargeback["amountTaxInclusive"] as? Int == 15000)
        #expect(chargeback["taxAmount"] as? Int == 2390)
        #expect(chargeback["netAmountTaxExclusive"] as? Int == 25200 - 12610)
        #expect(try ledger.payments.purchase(id: transaction)?.status == .partiallyRefunded)
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// Refunds after a chargeback's reversal give back the buy's tax, no more: the refund that completed the buy
    /// under the chargeback took the rest of its tax (1.60, where Paddle stated 1.00), and once
    /// the reversal brought the chargeback's money back, the next refund counted from Paddle's figures gave back
    /// 3.79 more: 5.39 of tax refunded on a buy with 4.79, its net 0.60 where nothing was left.
    @Test func refundsAfterAReversalGiveBackTheBuysTaxNoMore() throws {
        let harness = try PaddleFlowTests.Harness()
        let now = Clock.system.nowSeconds()
        let (transaction, completed) = try Self.sale(harness, event: "evt_13done", at: now - 9)
        func adjustment(_ id: String, _ action: String, _ total: Int64, _ tax: Int64, at: Int64) -> String {
            Self.adjustment(of: transaction, id, action, total, tax, at: at)
        }
        try Self.deliverInTurn(
            harness,
            [
                completed, adjustment("adj_13cb", "chargeback", 2000, 319, at: now - 8),
                adjustment("adj_13rf1", "refund", 999, 100, at: now - 7),
                adjustment("adj_13rev", "chargeback_reverse", 2000, 319, at: now - 6),
                adjustment("adj_13rf2", "refund", 2000, 319, at: now - 5),
            ]
        )
        let items = harness.payments.reportedLineItems()
        func latest(_ id: String) -> [String: Any]? { items.last { $0["lineItemId"] as? String == id } }
        let first = try #require(latest("\(transaction):refund:adj_13rf1"))
        let second = try #require(latest("\(transaction):refund:adj_13rf2"))
        #expect(first["taxAmount"] as? Int == 1600)
        #expect(second["amountTaxInclusive"] as? Int == 20000)
        #expect(second["taxAmount"] as? Int == 4790 - 1600, "\(second)")
        #expect(second["netAmountTaxExclusive"] as? Int == 0, "\(second)")
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// A chargeback of the whole payment after a refund the operator retracted takes what Paddle left (19.99 of
    /// 29.99) and that share of the tax Paddle states (3.19 of 4.79), not all of it: Apple was left holding 10.00
    /// with no tax.
    @Test func aCappedChargebackTakesItsShareOfTheStatedTax() throws {
        let harness = try PaddleFlowTests.Harness()
        let now = Clock.system.nowSeconds()
        let (transaction, completed) = try Self.sale(harness, event: "evt_14done", at: now - 9)
        try Self.deliverInTurn(
            harness,
            [completed, Self.adjustment(of: transaction, "adj_14rf", "refund", 1000, 160, at: now - 8)]
        )
        let ledger = harness.live.application.ledger
        let token = try #require(try ledger.payments.purchase(id: transaction)?.externalPurchaseId)
        _ = try ReportActions(ledger: ledger, clock: .system).retract(
            token,
            lineItemId: LineItemID("\(transaction):refund:adj_14rf")
        )
        try Self.deliverInTurn(
            harness,
            [Self.adjustment(of: transaction, "adj_14cb", "chargeback", 2999, 479, at: now - 7)]
        )
        let chargeback = try #require(
            harness.payments.reportedLineItems().last {
                $0["lineItemId"] as? String == "\(transaction):dispute:adj_14cb"
            }
        )
        #expect(chargeback["amountTaxInclusive"] as? Int == 19990)
        #expect(chargeback["taxAmount"] as? Int == 3190, "\(chargeback)")
        #expect(chargeback["netAmountTaxExclusive"] as? Int == 25200 - (19990 - 3190), "\(chargeback)")
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// A chargeback the operator withdrew (`linkout report retract`) and Paddle then reversed is withdrawn once:
    /// the reversal gives the money back in the ledger and sends Apple nothing more (it sent the same retraction
    /// again).
    @Test func aReversalOfAChargebackTheOperatorRetractedSendsNothingMore() throws {
        let harness = try PaddleFlowTests.Harness()
        let now = Clock.system.nowSeconds()
        let (transaction, completed) = try Self.sale(harness, event: "evt_12done", at: now - 9)
        func adjustment(_ id: String, _ action: String, at: Int64) -> String {
            Self.adjustment(of: transaction, id, action, 2999, 479, at: at)
        }
        try Self.deliverInTurn(harness, [completed, adjustment("adj_12cb", "chargeback", at: now - 8)])
        let ledger = harness.live.application.ledger
        let token = try #require(try ledger.payments.purchase(id: transaction)?.externalPurchaseId)
        let chargeback = LineItemID("\(transaction):dispute:adj_12cb")
        _ = try ReportActions(ledger: ledger, clock: .system).retract(token, lineItemId: chargeback)
        let sent = harness.payments.reportedLineItems().filter { $0["lineItemId"] as? String == chargeback.rawValue }
        #expect(sent.count == 2 && sent.last?["erroneouslySubmitted"] as? Bool == true)

        try Self.deliverInTurn(harness, [adjustment("adj_12rev", "chargeback_reverse", at: now - 7)])
        let outcome = try ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10)
            .first { $0.eventId == "evt_adj_12rev" }?.outcome
        #expect(outcome?.description == "chargeback reversed; line item \(chargeback) was retracted already")
        #expect(
            harness.payments.reportedLineItems().filter { $0["lineItemId"] as? String == chargeback.rawValue }.count
                == 2
        )
        #expect(try ledger.payments.purchase(id: transaction)?.status == .paid)
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// A refund of more than is left with no chargeback that took money (Paddle never sends one; a malformed or
    /// hand-made delivery might): no reversal can come, so it waits as any event does and is given up after three
    /// days, rather than waiting for good and holding the month's close open.
    @Test func aRefundOfMoreThanIsLeftWithNoChargebackIsGivenUpAfterThreeDays() throws {
        let time = ManualClock()
        let harness = try PaddleFlowTests.Harness(clock: time.clock)
        let now = Clock.system.nowSeconds()
        let (transaction, completed) = try Self.sale(harness, event: "evt_10done", at: now - 9)
        try Self.deliverInTurn(
            harness,
            [completed, Self.adjustment(of: transaction, "adj_10ref1", "refund", 2000, 320, at: now - 8)]
        )
        let ledger = harness.live.application.ledger
        let over = Self.adjustment(of: transaction, "adj_10ref2", "refund", 2000, 320, at: now - 7)
        #expect(try harness.deliver(over).status == 200)
        #expect(
            eventually(within: 30) {
                Self.outcome(in: ledger, "evt_adj_10ref2")?.contains("no chargeback took any") == true
            },
            "\(Self.outcome(in: ledger, "evt_adj_10ref2") ?? "none")"
        )
        time.advance(seconds: 3 * 86_400 + 3_600)
        // The event processor's pass, woken by the clock, gives it up.
        #expect(
            eventually(within: 30) { Self.outcome(in: ledger, "evt_adj_10ref2")?.hasPrefix("gave up:") == true },
            "\(Self.outcome(in: ledger, "evt_adj_10ref2") ?? "none")"
        )
        // The first refund stands at Apple as it was; nothing of the second was sent.
        let refunds = harness.payments.reportedLineItems().compactMap { $0["lineItemId"] as? String }
            .filter { $0.contains(":refund:") }
        #expect(refunds == ["\(transaction):refund:adj_10ref1"], "\(refunds)")
    }

    /// A renewal of 3.99 paid 2.00 in money and the rest from credit: a chargeback of the 2.00, then a refund of
    /// 1.50 approved before the chargeback's reversal. The refund is of money the chargeback took, so it waits for
    /// the reversal (compared with the 3.99 price it looked covered, was capped to nothing, and was lost).
    @Test func aRefundOfARenewalPaidPartlyFromCreditWaitsForTheReversal() throws {
        let time = ManualClock()
        let harness = try PaddleFlowTests.Harness(clock: time.clock)
        let checkout = try harness.payments.openCheckout()
        let transaction = try harness.buy("pro.monthly", checkout)
        let now = Clock.system.nowSeconds()
        let day: Int64 = 86_400
        let custom = harness.custom(checkout, product: "pro.monthly")
        func paid(_ id: String, _ origin: String, at: Int64, _ period: (Int64, Int64)) -> String {
            PaddleFixtures.transaction(
                eventId: "evt_" + id,
                occurredAt: PaddleFlowTests.time(now + at),
                transactionId: id,
                origin: origin,
                subscriptionId: "sub_10x",
                currency: "EUR",
                totals: .init(subtotal: 335, tax: 64, total: 399),
                customData: custom,
                billingPeriod: (PaddleFlowTests.time(now + period.0), PaddleFlowTests.time(now + period.1))
            )
        }
        let renewal = paid("txn_10renew", "subscription_recurring", at: -10, (-10 * day, 20 * day))
            .replacingOccurrences(
                of: #""grand_total":"399","grand_total_tax":"64""#,
                with: #""grand_total":"200","grand_total_tax":"32""#
            )
        #expect(renewal.contains(#""grand_total":"200""#))
        harness.paddle.addTransaction("txn_10renew", customData: custom)
        func adjustment(_ id: String, _ action: String, _ total: Int64, _ tax: Int64, at: Int64) -> String {
            Self.adjustment(of: "txn_10renew", id, action, total, tax, at: now + at)
        }
        try Self.deliverInTurn(
            harness,
            [
                paid(transaction, "web", at: -20, (-40 * day, -10 * day)), renewal,
                adjustment("adj_10cb", "chargeback", 200, 32, at: -8),
            ]
        )
        let ledger = harness.live.application.ledger
        #expect(try harness.deliver(adjustment("adj_10ref", "refund", 150, 24, at: -6)).status == 200)
        #expect(eventually(within: 30) { Self.outcome(in: ledger, "evt_adj_10ref")?.hasPrefix("waiting:") == true })
        #expect(try harness.deliver(adjustment("adj_10rev", "chargeback_reverse", 200, 32, at: -5)).status == 200)
        #expect(eventually(within: 30) { Self.outcome(in: ledger, "evt_adj_10rev")?.contains("retracted") == true })
        // The reversal made the refund due at once: the next pass takes it, with no waiting out its put-off.
        #expect(try harness.deliver(adjustment("adj_10other", "credit", 100, 16, at: 0)).status == 200)
        #expect(
            eventually(within: 30) { Self.outcome(in: ledger, "evt_adj_10ref")?.contains("queued for Apple") == true },
            "\(Self.outcome(in: ledger, "evt_adj_10ref") ?? "none")"
        )
        let refund = try #require(
            harness.payments.reportedLineItems().first { $0["lineItemId"] as? String == "txn_10renew:refund:adj_10ref" }
        )
        #expect(refund["amountTaxInclusive"] as? Int == 1500)
        #expect(refund["taxAmount"] as? Int == 240)
        // The renewal is what Paddle charged and the tax Paddle states of it (0.32, not a share of 0.64: 0.321).
        let renewed = try #require(
            harness.payments.reportedLineItems().first { $0["lineItemId"] as? String == "txn_10renew" }
        )
        #expect(renewed["amountTaxInclusive"] as? Int == 2000 && renewed["taxAmount"] as? Int == 320, "\(renewed)")
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// A chargeback after a full refund takes nothing (the money was back already): its reversal gives nothing
    /// back and has nothing to withdraw at Apple, and is taken at once (before, it waited for a line item that
    /// never came and was given up, or marked the purchase paid again).
    @Test func theReversalOfAChargebackThatTookNothingGivesNothingBack() throws {
        let harness = try PaddleFlowTests.Harness()
        let now = Clock.system.nowSeconds()
        let (transaction, completed) = try Self.sale(harness, event: "evt_10done", at: now - 9)
        func adjustment(_ id: String, _ action: String, at: Int64) -> String {
            Self.adjustment(of: transaction, id, action, 2999, 479, at: at)
        }
        try Self.deliverInTurn(
            harness,
            [
                completed,
                adjustment("adj_10ref", "refund", at: now - 8),
                adjustment("adj_10cb", "chargeback", at: now - 7),
                adjustment("adj_10rev", "chargeback_reverse", at: now - 6),
            ]
        )
        let ledger = harness.live.application.ledger
        let outcome = try ledger.payments.paymentEvents(unprocessedOnly: false, limit: 10)
            .first { $0.eventId == "evt_adj_10rev" }?.outcome
        #expect(
            outcome?.description.hasPrefix("chargeback reversed; no chargeback") == true,
            "\(outcome?.description ?? "none")"
        )
        #expect(try ledger.payments.purchase(id: transaction)?.status == .refunded)
        #expect(
            harness.payments.reportedLineItems().map { $0["lineItemId"] as? String } == [
                transaction, "\(transaction):refund:adj_10ref",
            ]
        )
        #expect(harness.payments.apple.apple.received.allSatisfy { $0.problems.isEmpty })
    }

    /// A sale of 29.99 and the adjustments of its transaction (action and id), delivered in turn with a backend
    /// listening: the entitlement events made for it, in their order.
    static func entitlementEvents(after adjustments: [(action: String, id: String)]) throws -> [WebhookDelivery] {
        let backend = try WebhookReceiver(secret: PaddleFlowTests.backendSecret)
        defer { backend.stop() }
        let harness = try PaddleFlowTests.Harness(backend: backend)
        let now = Clock.system.nowSeconds()
        let (transaction, completed) = try Self.sale(harness, event: "evt_done", at: now - 9)
        let bodies = adjustments.enumerated().map { index, adjustment in
            Self.adjustment(of: transaction, adjustment.id, adjustment.action, 2999, 479, at: now - 8 + Int64(index))
        }
        try Self.deliverInTurn(harness, [completed] + bodies)
        return try harness.live.application.ledger.entitlements.webhooks(limit: 20).sorted { $0.sequence < $1.sequence }
    }

    /// The developer's backend hears of a chargeback's reversal (`purchase.reinstated`), as it heard of the
    /// chargeback: it kept the person's entitlement taken while linkout's API said the purchase stood. A second
    /// chargeback after the reversal is an event of its own (the same cause made the same event, never sent).
    @Test func theBackendHearsOfAReversalAndOfAChargebackAfterIt() throws {
        let events = try Self.entitlementEvents(
            after: [("chargeback", "adj_20cb1"), ("chargeback_reverse", "adj_20rev"), ("chargeback", "adj_20cb2")]
        )
        #expect(
            events.map(\.type) == [
                "purchase.completed", "purchase.refunded", "purchase.reinstated", "purchase.refunded",
            ]
        )
        #expect(Set(events.map(\.eventId)).count == 4)
        #expect(events[2].body.contains(#""status":"paid""#), "\(events[2].body)")
        #expect(events[3].body.contains(#""status":"refunded""#), "\(events[3].body)")
    }

    /// A chargeback of a payment refunded in full took nothing: its reversal gives nothing back, and the backend
    /// hears of no reinstatement (it would have re-granted a refunded purchase).
    @Test func aReversalThatGivesNothingBackReinstatesNothing() throws {
        let events = try Self.entitlementEvents(
            after: [("refund", "adj_21ref"), ("chargeback", "adj_21cb"), ("chargeback_reverse", "adj_21rev")]
        )
        #expect(events.map(\.type) == ["purchase.completed", "purchase.refunded"])
    }
}
