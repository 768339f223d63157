import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Storage
import Synchronization
import Testing

@testable import LinkOut

/// Apple's `400`s (Apple: "SendReportErrorResponse"), through the real libcurl client against the fake Apple: each kind
/// of rejection is acted on, and a token is never left rejected in silence.
@Suite("Apple's rejections")
struct RejectionTests {
    typealias AppleError = FakeAppleServer.AppleError

    static func criticalLines(_ harness: ReportingHarness, containing text: String) -> Int {
        harness.logLines.all.filter { $0.contains(#""level":"critical""#) && $0.contains(text) }.count
    }

    /// Apple names one line item: it is set aside with Apple's message and the rest goes again under the same
    /// requestIdentifier; the operator's restatement then goes in a new report.
    @Test func aLineItemAppleNamesIsSetAsideAndTheRestGoesAgain() throws {
        let harness = try ReportingHarness()
        try harness.record("split")
        let (bad, good) = (UUID().uuidString.lowercased(), UUID().uuidString.lowercased())
        try harness.addBuy("split", lineItemId: bad)
        try harness.addBuy("split", lineItemId: good)
        harness.production.enqueue(FakeAppleServer.rejection([AppleError.incorrectNetAmount(bad)]))
        try harness.tickUntilSettled()
        let received = harness.production.received
        #expect(received.count == 2)
        #expect(received.count == 2 && received[1].report?.requestIdentifier == received[0].report?.requestIdentifier)
        #expect(received.last?.report?.lineItems?.map(\.common.lineItemId) == [LineItemID(good)])
        #expect(try harness.reports("split").map(\.state) == [.accepted])
        let setAside = try harness.ledger.reports.lineItems(for: "split").filter(\.needsCorrection)
        #expect(setAside.map(\.lineItemId) == [LineItemID(bad)])
        #expect(setAside.first?.correction?.contains("IncorrectNetAmountError") == true)
        let attention = try harness.ledger.reports.needingAttention(limit: 10)
        #expect(attention.map(\.externalPurchaseId) == ["split"])
        #expect(attention.first?.resolution.contains("linkout report restate split \(bad)") == true)
        #expect(attention.first?.waitingPaymentEvents == 0 && attention.first?.waiting == nil)
        #expect(Self.criticalLines(harness, containing: "line items need correction") == 1)
        // A refund of the set-aside buy waits behind it (`PaymentChangeMapper`): the entry says so.
        let refund = StoredPaymentEvent(
            provider: "stripe",
            eventId: "evt_refund",
            type: "charge.refunded",
            body: "{}",
            receivedAt: 1
        )
        #expect(try harness.ledger.payments.storePaymentEvent(refund))
        try harness.ledger.payments.deferBehindHold(
            provider: "stripe",
            eventId: "evt_refund",
            externalPurchaseId: "split",
            until: .max,
            reason: "the refunded line item \(bad) is set aside for correction"
        )
        let waiting = try #require(try harness.ledger.reports.needingAttention(limit: 10).first)
        #expect(waiting.waitingPaymentEvents == 1)
        #expect(waiting.waiting?.contains("1 payment event(s)") == true)

        let outcome = try ReportActions(ledger: harness.ledger).restate(
            "split",
            lineItemId: LineItemID(bad),
            body: ReportingHarness.buyJSON(lineItemId: bad)
        )
        #expect(outcome.action == "restate")
        // The outcome (and so the audit trail) says what Apple will now be told differently.
        #expect(outcome.detail.contains("; changed: ") || outcome.detail.hasSuffix("; no field changed"))
        try harness.tickUntilSettled()
        let after = harness.production.received
        #expect(after.count == 3)
        #expect(after.last?.report?.lineItems?.map(\.common.lineItemId) == [LineItemID(bad)])
        #expect(after.last?.report?.requestIdentifier != received.first?.report?.requestIdentifier)
        #expect(try harness.reports("split").map(\.state) == [.accepted, .accepted])
        #expect(try harness.ledger.reports.attentionCount() == 0)
    }

    /// Apple names the buy of a report that also carries a refund of it: the buy is set aside, and so is the refund,
    /// which would refer to a buy Apple does not hold (`NotFoundError`; it went again alone). The operator restates
    /// the buy: the refund is checked again and goes with it, its net the restated buy's after it (it stayed set
    /// aside until restated by hand, and the body the attention list showed carried a net Apple then refused).
    @Test func restatingABuyTakesAgainTheRefundSetAsideBecauseOfIt() throws {
        let harness = try ReportingHarness()
        try harness.record("pair")
        let buy = UUID().uuidString.lowercased()
        let refund = "\(buy):refund:1"
        try harness.addBuy("pair", lineItemId: buy)
        let refundJSON = """
            {"lineItemId":"\(refund)","creationDate":\(Clock.system.nowMilliseconds() - 500),"eventType":"REFUND",\
            "referenceLineItemId":"\(buy)","amountTaxInclusive":3600,"amountTaxExclusive":3000,"taxAmount":600,\
            "netAmountTaxExclusive":7000,"reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"DEU"}
            """
        try harness.ledger.reports.storeLineItems(
            [(LineItemID(refund), refundJSON)],
            for: "pair",
            at: Clock.system.nowMilliseconds()
        )
        harness.production.enqueue(FakeAppleServer.rejection([AppleError.incorrectNetAmount(buy)]))
        try harness.tickUntilSettled()
        let setAside = try harness.ledger.reports.lineItems(for: "pair").filter(\.needsCorrection).map(\.lineItemId)
        #expect(setAside == [LineItemID(buy), LineItemID(refund)], "\(setAside)")

        // The buy restated at 12.00 (10.00 tax-exclusive becomes 11.00), its net given as the old one.
        let restated = ReportingHarness.buyJSON(lineItemId: buy).replacingOccurrences(
            of: #""amountTaxExclusive":10000"#,
            with: #""amountTaxExclusive":11000"#
        ).replacingOccurrences(of: #""taxAmount":2000"#, with: #""taxAmount":1000"#)
        let outcome = try ReportActions(ledger: harness.ledger).restate(
            "pair",
            lineItemId: LineItemID(buy),
            body: restated
        )
        #expect(outcome.detail.contains("set-aside refund(s) \(refund) checked again"), "\(outcome.detail)")
        // Apple's first version of the buy: its net is its amount (the operator's file had the old one).
        #expect(outcome.detail.contains("net set to 11000"), "\(outcome.detail)")
        try harness.tickUntilSettled()
        let last = try #require(harness.production.received.last?.report?.lineItems)
        #expect(last.map(\.common.lineItemId) == [LineItemID(buy), LineItemID(refund)])
        #expect(last.map(\.common.netAmountTaxExclusive) == [11000, 8000])
        #expect(last.allSatisfy { $0.common.restatement != true })
        #expect(try harness.reports("pair").last?.state == .accepted)
        #expect(try harness.ledger.reports.attentionCount() == 0)

        // The same on another token, but the operator withdraws the buy Apple never held: its refund can never be
        // reported and goes with it, and the token, left with nothing, is reported NO_LINE_ITEM.
        try harness.record("gone")
        let other = UUID().uuidString.lowercased()
        try harness.addBuy("gone", lineItemId: other)
        try harness.ledger.reports.storeLineItems(
            [(LineItemID("\(other):refund:1"), refundJSON.replacingOccurrences(of: buy, with: other))],
            for: "gone",
            at: Clock.system.nowMilliseconds()
        )
        harness.production.enqueue(FakeAppleServer.rejection([AppleError.incorrectNetAmount(other)]))
        try harness.tickUntilSettled()
        let withdrawn = try ReportActions(ledger: harness.ledger).retract("gone", lineItemId: LineItemID(other))
        #expect(
            withdrawn.detail.contains("set-aside refund(s) \(other):refund:1 dropped with it"),
            "\(withdrawn.detail)"
        )
        #expect(withdrawn.detail.contains("goes again as NO_LINE_ITEM"), "\(withdrawn.detail)")
        #expect(try harness.ledger.reports.lineItems(for: "gone").filter(\.needsCorrection).isEmpty)
        try harness.tickUntilSettled()
        #expect(harness.production.received.last?.report?.status == .noLineItem)
        #expect(try harness.ledger.reports.attentionCount() == 0)
        // Retracted again: said to be dropped already, not "still on its way".
        #expect {
            try ReportActions(ledger: harness.ledger).retract("gone", lineItemId: LineItemID(other))
        } throws: { error in
            (error as? ReportActions.Refusal)?.description
                == "line item \(other) was dropped already: Apple holds none of it"
        }

        // A refund Apple refused for itself waits for the operator whatever else of its buy is restated.
        try harness.record("own")
        let third = UUID().uuidString.lowercased()
        try harness.addBuy("own", lineItemId: third)
        try harness.ledger.reports.storeLineItems(
            [(LineItemID("\(third):refund:1"), refundJSON.replacingOccurrences(of: buy, with: third))],
            for: "own",
            at: Clock.system.nowMilliseconds()
        )
        harness.production.enqueue(FakeAppleServer.rejection([AppleError.incorrectNetAmount("\(third):refund:1")]))
        try harness.tickUntilSettled()
        let held = try #require(
            try harness.ledger.reports.lineItems(for: "own").first { $0.lineItemId.rawValue == third }
        )
        let again = try ReportActions(ledger: harness.ledger).restate(
            "own",
            lineItemId: LineItemID(third),
            body: held.body
        )
        #expect(!again.detail.contains("checked again"), "\(again.detail)")
        let waiting = try harness.ledger.reports.lineItems(for: "own").filter(\.needsCorrection).map(\.lineItemId)
        #expect(waiting == [LineItemID("\(third):refund:1")])
    }

    /// A refund of 1.00 (1.20 with tax) of `buy`, the `number`th, with the net it carries.
    static func refundJSON(of buy: String, _ number: Int, net: Int64) -> String {
        """
        {"lineItemId":"\(buy):refund:\(number)","creationDate":\(Clock.system.nowMilliseconds() - 500 + Int64(number)),\
        "eventType":"REFUND","referenceLineItemId":"\(buy)","amountTaxInclusive":1200,"amountTaxExclusive":1000,\
        "taxAmount":200,"netAmountTaxExclusive":\(net),"reportingCurrency":"EUR","pricingCurrency":"EUR",\
        "taxCountry":"DEU"}
        """
    }

    /// Apple refuses a refund; a later refund of the same buy in that report nets it (Apple holds it not), so it
    /// waits for it, and is taken again with its net once the operator restates the refused one (sent again as it
    /// was, it was refused for the same net and waited for a person).
    @Test func aRefundAfterARefusedRefundOfItsBuyWaitsForIt() throws {
        let harness = try ReportingHarness()
        try harness.record("two")
        let buy = UUID().uuidString.lowercased()
        try harness.addBuy("two", lineItemId: buy)
        func refund(_ number: Int, net: Int64) -> String { Self.refundJSON(of: buy, number, net: net) }
        let first = LineItemID("\(buy):refund:1")
        let second = LineItemID("\(buy):refund:2")
        try harness.ledger.reports.storeLineItems(
            [(first, refund(1, net: 9000)), (second, refund(2, net: 8000))],
            for: "two",
            at: Clock.system.nowMilliseconds()
        )
        harness.production.enqueue(FakeAppleServer.rejection([AppleError.incorrectNetAmount(first.rawValue)]))
        try harness.tickUntilSettled()
        let setAside = try harness.ledger.reports.lineItems(for: "two").filter(\.needsCorrection)
        #expect(setAside.map(\.lineItemId) == [first, second])
        #expect(setAside.last?.correction?.hasPrefix(AppleRejection.waitsForNotePrefix) == true)

        let outcome = try ReportActions(ledger: harness.ledger).restate(
            "two",
            lineItemId: first,
            body: refund(1, net: 9000)
        )
        #expect(outcome.detail.contains("set-aside refund(s) \(second) checked again"), "\(outcome.detail)")
        try harness.tickUntilSettled()
        let last = try #require(harness.production.received.last?.report?.lineItems)
        #expect(last.map(\.common.lineItemId) == [first, second])
        #expect(last.map(\.common.netAmountTaxExclusive) == [9000, 8000])
        #expect(try harness.ledger.reports.attentionCount() == 0)
    }

    /// The same refunds in two reports: the first refund went alone and Apple refused it; the second was made
    /// while the first was on its way, so its net counts it. Found out before sending, it is netted again against
    /// what Apple holds and goes (as a refund made after the refusal would), not set aside as wrong in itself; the
    /// refused one waits for the operator, and its restatement then nets both.
    @Test func aRefundMadeBeforeAnotherWasRefusedGoesWithItsNetTakenAgain() throws {
        let harness = try ReportingHarness()
        try harness.record("apart")
        let buy = UUID().uuidString.lowercased()
        try harness.addBuy("apart", lineItemId: buy)
        try harness.tickUntilSettled()
        func refund(_ number: Int, net: Int64) -> String { Self.refundJSON(of: buy, number, net: net) }
        let first = LineItemID("\(buy):refund:1")
        let second = LineItemID("\(buy):refund:2")
        try harness.ledger.reports.storeLineItems([(first, refund(1, net: 9000))], for: "apart", at: 1)
        harness.production.enqueue(FakeAppleServer.rejection([AppleError.incorrectNetAmount(first.rawValue)]))
        try harness.tickUntilSettled()
        #expect(
            try harness.ledger.reports.lineItems(for: "apart").filter(\.needsCorrection).map(\.lineItemId) == [first]
        )
        // The second was made while the first was on its way (it counts it); a third after the refusal, while the
        // second waited (it counts the second, not the first).
        let third = LineItemID("\(buy):refund:3")
        try harness.ledger.reports.storeLineItems([(second, refund(2, net: 8000))], for: "apart", at: 2)
        try harness.ledger.reports.storeLineItems([(third, refund(3, net: 8000))], for: "apart", at: 3)
        let rowsBefore = try harness.ledger.reports.lineItems(for: "apart").count
        try harness.tickUntilSettled()
        let sent = try #require(harness.production.received.last?.report?.lineItems)
        #expect(sent.map(\.common.lineItemId) == [second, third])
        #expect(sent.map(\.common.netAmountTaxExclusive) == [9000, 8000], "the buy less the refunds Apple holds")
        #expect(try harness.reports("apart").last?.state == .accepted)
        let stored = try harness.ledger.reports.lineItems(for: "apart")
        #expect(stored.count == rowsBefore, "netted again in place, no version added")
        #expect(stored.filter(\.needsCorrection).map(\.lineItemId) == [first])

        // A restatement carrying a field of another kind of item is refused by name, as a posted item is.
        let misplaced = refund(1, net: 9000).replacingOccurrences(
            of: #""taxCountry":"DEU"}"#,
            with: #""taxCountry":"DEU","subscriptionStartDate":1}"#
        )
        #expect(throws: ReportActions.Refusal.self) {
            try ReportActions(ledger: harness.ledger).restate("apart", lineItemId: first, body: misplaced)
        }
        _ = try ReportActions(ledger: harness.ledger).restate("apart", lineItemId: first, body: refund(1, net: 9000))
        try harness.tickUntilSettled()
        let restated = try #require(harness.production.received.last?.report?.lineItems)
        #expect(restated.map(\.common.lineItemId) == [first])
        #expect(restated.map(\.common.netAmountTaxExclusive) == [7000])
        #expect(try harness.ledger.reports.attentionCount() == 0)
    }

    /// A report of two refunds refused as a whole (an error naming no line item), then the operator restates the
    /// first with another amount: the second, in the same rejected report, counted the first's old amount. It is
    /// netted again where the revision carries it (it stayed, and the report was refused locally on every pass).
    @Test func aRefundAfterARestatedRefundInARejectedReportIsNettedAgain() throws {
        let harness = try ReportingHarness()
        try harness.record("whole")
        let buy = UUID().uuidString.lowercased()
        try harness.addBuy("whole", lineItemId: buy)
        try harness.tickUntilSettled()
        let first = LineItemID("\(buy):refund:1")
        let second = LineItemID("\(buy):refund:2")
        try harness.ledger.reports.storeLineItems(
            [(first, Self.refundJSON(of: buy, 1, net: 9000)), (second, Self.refundJSON(of: buy, 2, net: 8000))],
            for: "whole",
            at: 1
        )
        let noLineItem = SendReportErrorResponse.Failure(
            errorCode: 4_000_030,
            errorMessage: "InvalidTaxCountryError",
            fieldName: "taxCountry"
        )
        harness.production.enqueue(FakeAppleServer.rejection([noLineItem]))
        try harness.tickUntilSettled()
        #expect(try harness.ledger.reports.attentionCount() == 1)
        // Nothing of it was set aside: a retraction says what settles such a report instead.
        do {
            _ = try ReportActions(ledger: harness.ledger).retract("whole", lineItemId: second)
            Issue.record("a retraction of an item of a report refused as a whole was taken")
        } catch let refusal as ReportActions.Refusal {
            #expect(refusal.description.contains("refused as a whole"), "\(refusal)")
        }
        let larger = Self.refundJSON(of: buy, 1, net: 9000).replacingOccurrences(
            of: #""amountTaxInclusive":1200,"amountTaxExclusive":1000,"taxAmount":200"#,
            with: #""amountTaxInclusive":1800,"amountTaxExclusive":1500,"taxAmount":300"#
        )
        _ = try ReportActions(ledger: harness.ledger).restate("whole", lineItemId: first, body: larger)
        try harness.tickUntilSettled()
        let sent = try #require(harness.production.received.last?.report?.lineItems)
        #expect(sent.map(\.common.lineItemId) == [first, second])
        #expect(sent.map(\.common.netAmountTaxExclusive) == [8500, 7500])
        #expect(try harness.reports("whole").last?.state == .accepted)
        #expect(try harness.ledger.reports.attentionCount() == 0)
    }

    /// A new version of a buy made as Apple's first (a late renewal changed its days while a report was taking the
    /// one before, so it was not known to be at Apple yet) goes as a restatement, and then nets what stands of the
    /// buy after its refunds: with its first version's net Apple refused it (`IncorrectNetAmountError`).
    @Test func aBuyMadeAsAFirstVersionAndSentAsARestatementNetsItsRefunds() throws {
        let harness = try ReportingHarness()
        try harness.record("late")
        let buy = UUID().uuidString.lowercased()
        try harness.addBuy("late", lineItemId: buy)
        try harness.tickUntilSettled()
        let refund = """
            {"lineItemId":"\(buy):refund:1","creationDate":\(Clock.system.nowMilliseconds() - 500),"eventType":"REFUND",\
            "referenceLineItemId":"\(buy)","amountTaxInclusive":12000,"amountTaxExclusive":10000,"taxAmount":2000,\
            "netAmountTaxExclusive":0,"reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"DEU"}
            """
        try harness.ledger.reports.storeLineItems(
            [(LineItemID("\(buy):refund:1"), refund)],
            for: "late",
            at: Clock.system.nowMilliseconds()
        )
        try harness.tickUntilSettled()
        // The buy again, as a first version would be made: no restatement flag, its own amount as its net.
        let first = try #require(try harness.ledger.reports.lineItems(for: "late").first)
        #expect(first.lineItemId == LineItemID(buy))
        _ = try harness.ledger.reports.correctLineItem(
            LineItemID(buy),
            of: "late",
            replacement: first.body,
            now: Clock.system.nowMilliseconds()
        )
        try harness.tickUntilSettled()
        let last = try #require(harness.production.received.last?.report?.lineItems?.last)
        #expect(last.common.lineItemId == LineItemID(buy))
        #expect(last.common.restatement == true)
        #expect(last.common.netAmountTaxExclusive == 0)
        let setAside = try harness.ledger.reports.lineItems(for: "late").filter(\.needsCorrection)
        #expect(setAside.isEmpty, "\(setAside.map { $0.correction ?? "" })")
        #expect(try harness.reports("late").last?.state == .accepted)
    }

    /// A retraction of a buy whose set-aside version is dropped while an earlier version is still on its way to
    /// Apple: the buy is not gone (Apple may accept that version), so its set-aside refunds are checked again, not
    /// dropped with it (they were, and Apple then held the buy without them).
    @Test func retractingASetAsideVersionKeepsTheRefundsOfABuyOnItsWay() throws {
        let harness = try ReportingHarness()
        try harness.record("way")
        let buy = UUID().uuidString.lowercased()
        try harness.addBuy("way", lineItemId: buy)
        let refund = "\(buy):refund:1"
        let refundJSON = """
            {"lineItemId":"\(refund)","creationDate":\(Clock.system.nowMilliseconds() - 500),"eventType":"REFUND",\
            "referenceLineItemId":"\(buy)","amountTaxInclusive":3600,"amountTaxExclusive":3000,"taxAmount":600,\
            "netAmountTaxExclusive":7000,"reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"DEU"}
            """
        let ledger = harness.ledger
        try ledger.reports.storeLineItems(
            [(LineItemID(refund), refundJSON)],
            for: "way",
            at: Clock.system.nowMilliseconds()
        )
        // A second version of the buy, set aside, and the refund set aside waiting on its buy.
        _ = try ledger.reports.correctLineItem(
            LineItemID(buy),
            of: "way",
            replacement: ReportingHarness.buyJSON(lineItemId: buy, euros: 11),
            now: Clock.system.nowMilliseconds()
        )
        let rows = try ledger.reports.lineItems(for: "way")
        let secondBuy = try #require(rows.last { $0.lineItemId == LineItemID(buy) })
        let waitingRefund = try #require(rows.last { $0.lineItemId == LineItemID(refund) })
        _ = try ledger.reports.setAsideUnsent([
            (secondBuy.rowId, "test: refused"), (waitingRefund.rowId, LineItemScreen.notePrefix + ": its buy"),
        ])

        let outcome = try ReportActions(ledger: ledger).retract("way", lineItemId: LineItemID(buy))
        #expect(outcome.detail.contains("the version on its way to Apple stands"), "\(outcome.detail)")
        #expect(!outcome.detail.contains("dropped with it"), "\(outcome.detail)")
        let kept = try ledger.reports.lineItems(for: "way").filter { $0.lineItemId == LineItemID(refund) }
        #expect(kept.contains { $0.correctedAt == nil }, "the refund is kept: set aside still, or stored again")
    }

    /// The operator's correction of an item Apple holds is a restatement, flag or not in their file: without it
    /// Apple refuses the changed item (`DuplicateValueError`).
    @Test func aCorrectionOfAnItemAppleHoldsGoesAsARestatement() throws {
        let harness = try ReportingHarness()
        try harness.record("held")
        let id = UUID().uuidString.lowercased()
        try harness.addBuy("held", lineItemId: id)
        try harness.tickUntilSettled()
        #expect(try harness.reports("held").map(\.state) == [.accepted])
        let accepted = try #require(try harness.ledger.reports.lineItems(for: "held").first?.body)
        // The same sale at half the price, as an operator would write it: no `restatement` field.
        var fields = try #require(try JSONSerialization.jsonObject(with: Data(accepted.utf8)) as? [String: Any])
        for key in ["amountTaxInclusive", "amountTaxExclusive", "taxAmount", "netAmountTaxExclusive"] {
            fields[key] = ((fields[key] as? Int) ?? 0) / 2
        }
        let corrected = String(decoding: try JSONSerialization.data(withJSONObject: fields), as: UTF8.self)
        #expect(!corrected.contains("restatement"))
        let outcome = try ReportActions(ledger: harness.ledger).restate(
            "held",
            lineItemId: LineItemID(id),
            body: corrected
        )
        #expect(outcome.detail.contains("marked restatement"), "\(outcome.detail)")
        try harness.tickUntilSettled()
        let sent = try #require(harness.production.received.last?.report?.lineItems?.first)
        #expect(sent.common.lineItemId == LineItemID(id))
        #expect(sent.common.restatement == true)
        #expect(try harness.reports("held").map(\.state) == [.accepted, .accepted])
    }

    /// A 200 that is not Apple's answer (a proxy's page) settles nothing: the report stays pending and goes again
    /// under its identifier, and only Apple's answer accepts it.
    @Test func aTwoHundredThatIsNotApplesAnswerAcceptsNothing() throws {
        let harness = try ReportingHarness()
        try harness.record("proxied")
        try harness.addBuy("proxied")
        harness.production.enqueue(.respond(status: 200, body: "<html>oops</html>"))
        harness.service.tick()
        let first = try #require(try harness.reports("proxied").first)
        #expect(first.state == .pending)
        #expect(first.lastHTTPStatus == 200 && first.lastResponse == "<html>oops</html>")
        try harness.tickUntilSettled()
        let sent = harness.production.received.compactMap { $0.report?.requestIdentifier }
        #expect(sent.count == 2 && sent[0] == sent[1])
        #expect(try harness.reports("proxied").map(\.state) == [.accepted])
    }

    /// `DuplicateTokenStatusNotAllowedError`: the token is reported `NO_LINE_ITEM` under the same identifier.
    @Test func aRefusedDuplicateTokenIsReportedNoLineItem() throws {
        let harness = try ReportingHarness()
        let account = UUID().uuidString.lowercased()
        let now = Clock.system.nowMilliseconds()
        try harness.record(
            "dup-a",
            type: "ACQUISITION",
            account: account,
            created: now - 120_000,
            expires: now + 3_600_000
        )
        try harness.record(
            "dup-b",
            type: "ACQUISITION",
            account: account,
            created: now - 60_000,
            expires: now + 3_600_000
        )
        harness.production.respond { received in
            received.report?.status == .duplicateToken
                ? FakeAppleServer.rejection([AppleError.duplicateTokenNotAllowed]) : nil
        }
        try harness.tickUntilSettled()
        let sent = harness.production.received.compactMap(\.report).filter { $0.externalPurchaseId == "dup-b" }
        #expect(sent.map(\.status) == [.duplicateToken, .noLineItem])
        #expect(Set(sent.map(\.requestIdentifier)).count == 1)
        let reports = try harness.reports("dup-b")
        #expect(reports.map(\.state) == [.accepted])
        #expect(reports.first?.status == .noLineItem)
    }

    /// `SimultaneousSubmissionError` names no field: the same bytes go again later.
    @Test func aSimultaneousSubmissionIsRetriedWithTheSameBytes() throws {
        let harness = try ReportingHarness()
        try harness.record("together")
        harness.production.enqueue(FakeAppleServer.rejection([AppleError.simultaneous]))
        try harness.tickUntilSettled()
        let received = harness.production.received
        #expect(received.count == 2)
        #expect(Set(received.map(\.body)).count == 1)
        #expect(try harness.reports("together").map(\.state) == [.accepted])
    }

    /// A body saying "duplicate request" is checked with Retrieve even on a first attempt; Apple holding nothing,
    /// the token needs attention.
    @Test func aDuplicateRequestAnswerIsCheckedWithRetrieve() throws {
        let harness = try ReportingHarness()
        try harness.record("twice")
        harness.production.enqueue(FakeAppleServer.rejection([AppleError.duplicateRequest]))
        harness.service.tick()
        #expect(harness.production.retrieveCount == 1)
        #expect(try harness.reports("twice").map(\.state) == [.rejected])
    }

    /// The list of tokens that need a person pages: every one is reached, none twice.
    @Test func theAttentionListPages() throws {
        let harness = try ReportingHarness()
        for id in ["stuck-1", "stuck-2", "stuck-3"] { try harness.record(id) }
        harness.production.respond { _ in FakeAppleServer.rejection([AppleError.statusRegression]) }
        try harness.tickUntilSettled()
        let pages = try (0..<4).map { try harness.ledger.reports.needingAttention(limit: 1, offset: $0) }
        #expect(pages.map(\.count) == [1, 1, 1, 0])
        #expect(Set(pages.flatMap { $0.map(\.externalPurchaseId) }) == ["stuck-1", "stuck-2", "stuck-3"])
    }

    /// A 400 naming no error, with an empty body or `{}`, says so: it read "Apple: " with nothing after it.
    @Test func aRejectionNamingNoErrorSaysSo() throws {
        let harness = try ReportingHarness()
        try harness.record("blank")
        try harness.record("bare")
        harness.production.respond { received in
            switch received.report?.externalPurchaseId {
            case "blank": .respond(status: 400, body: "")
            case "bare": .respond(status: 400, body: "{}")
            default: nil
            }
        }
        try harness.tickUntilSettled()
        let messages = Dictionary(
            uniqueKeysWithValues: try harness.ledger.reports.needingAttention(limit: 10).map {
                ($0.externalPurchaseId, $0.appleMessage)
            }
        )
        #expect(messages["blank"] == "HTTP 400 naming no error, with an empty body", "\(messages)")
        #expect(messages["bare"] == "HTTP 400 naming no error, with the body {}", "\(messages)")
    }

    /// Any other rejection: one critical line, listed as needing attention with Apple's message, never resent
    /// by itself, and the operator's resend sends it again. Another token's report is not held up by it.
    @Test func anyOtherRejectionNeedsAttentionLoudlyOnce() throws {
        let harness = try ReportingHarness()
        try harness.record("stuck")
        try harness.record("fine")
        harness.production.respond { received in
            received.report?.externalPurchaseId == "stuck" && received.report?.status == .noLineItem
                ? FakeAppleServer.rejection([AppleError.statusRegression]) : nil
        }
        try harness.tickUntilSettled()
        let later = Clock.system.nowMilliseconds() + 86_400_000
        harness.service.tick(now: later)
        harness.service.tick(now: later + 86_400_000)
        #expect(harness.production.received.count == 2)
        #expect(try harness.reports("fine").map(\.state) == [.accepted])
        #expect(try harness.reports("stuck").map(\.state) == [.rejected])
        #expect(Self.criticalLines(harness, containing: "report needs attention") == 1)
        let attention = try #require(try harness.ledger.reports.needingAttention(limit: 10).first)
        #expect(attention.externalPurchaseId == "stuck")
        #expect(attention.appleMessage.contains("LineItemStatusRegressionError"))
        #expect(attention.resolution.contains("linkout report no-line-item stuck"))
        #expect(try harness.ledger.reports.attentionCount() == 1)

        harness.production.respond { _ in nil }
        _ = try ReportActions(ledger: harness.ledger).resend("stuck")
        try harness.tickUntilSettled()
        #expect(harness.production.received.count == 3)
        #expect(try harness.reports("stuck").map(\.state) == [.accepted])
        #expect(try harness.ledger.reports.attentionCount() == 0)
    }

    /// More rejected reports than one planning batch: a token behind the first batch still gets its revision.
    @Test func theRejectedPassPagesThroughEveryRejectedReport() throws {
        let harness = try ReportingHarness()
        harness.production.respond { received in
            received.report?.status == .noLineItem ? FakeAppleServer.rejection([AppleError.statusRegression]) : nil
        }
        try harness.record("oldest")
        harness.service.tick()
        for index in 0..<ReportingService.batchLimit { try harness.record("later-\(index)") }
        harness.service.tick()
        #expect(
            try harness.ledger.reports.reports(limit: 1_000, state: .rejected).count == ReportingService.batchLimit + 1
        )
        try harness.addBuy("oldest")
        harness.service.tick()
        let revision = harness.production.received.last?.report
        #expect(revision?.externalPurchaseId == "oldest")
        #expect(revision?.status == .lineItem)
        #expect(try harness.reports("oldest").map(\.state) == [.accepted])
    }

    /// A restatement corrects a line item the token has. Another token's item (restated onto this one) and an
    /// item the token never had both went to Apple and were accepted: one payment counted on two tokens, and a
    /// sale nobody made. Both are refused, and nothing more reaches Apple.
    @Test func aRestatementOfALineItemTheTokenNeverHadIsRefused() throws {
        let harness = try ReportingHarness()
        let own = UUID().uuidString.lowercased()
        let others = UUID().uuidString.lowercased()
        try harness.record("own")
        try harness.addBuy("own", lineItemId: own)
        try harness.record("other")
        try harness.addBuy("other", lineItemId: others)
        try harness.tickUntilSettled()
        let sent = harness.production.received.count
        let actions = ReportActions(ledger: harness.ledger)
        for id in [others, "brand-new-item"] {
            #expect {
                try actions.restate("own", lineItemId: LineItemID(id), body: ReportingHarness.buyJSON(lineItemId: id))
            } throws: { error in
                (error as? ReportActions.Refusal)?.kind == .conflict
                    && "\(error)".contains("the token has no line item \(id)")
            }
        }
        // Its own item as it stands changes nothing, and nothing goes to Apple: it went as another restatement.
        let stored = try #require(try harness.ledger.reports.lineItems(for: "own").first?.body)
        let unchanged = try actions.restate("own", lineItemId: LineItemID(own), body: stored)
        #expect(unchanged.detail.contains("unchanged"), "\(unchanged.detail)")
        try harness.tickUntilSettled()
        #expect(harness.production.received.count == sent)
        // Changed, it is restated as before.
        let lower = stored.replacingOccurrences(
            of: #""amountTaxInclusive":12000"#,
            with: #""amountTaxInclusive":10800"#
        )
        .replacingOccurrences(of: #""amountTaxExclusive":10000"#, with: #""amountTaxExclusive":9000"#)
        .replacingOccurrences(of: #""taxAmount":2000"#, with: #""taxAmount":1800"#)
        #expect(lower != stored)
        // The same restatement four times at once (a double click, the CLI beside the dashboard): stored once.
        let details = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let detail = (try? actions.restate("own", lineItemId: LineItemID(own), body: lower))?.detail ?? "failed"
            details.withLock { $0.append(detail) }
        }
        let answers = details.withLock { $0 }
        #expect(answers.filter { $0.contains("stored for the next report") }.count == 1, "\(answers)")
        #expect(answers.filter { $0.contains("unchanged") }.count == 3, "\(answers)")
        try harness.tickUntilSettled()
        let restated = harness.production.received.dropFirst(sent).compactMap(\.report)
        #expect(restated.map(\.externalPurchaseId) == ["own"])
        #expect(restated.flatMap { ($0.lineItems ?? []).map(\.common.lineItemId.rawValue) } == [own])
        #expect(try harness.ledger.reports.lineItems(for: "own").map(\.lineItemId.rawValue).allSatisfy { $0 == own })
    }

    /// The operator's `NO_LINE_ITEM` for a rejected report replaces its content under the same identifier; it is
    /// refused once Apple holds line items for the token (a status regression).
    @Test func theOperatorReportsNoLineItemUnderTheSameIdentifier() throws {
        let harness = try ReportingHarness()
        try harness.record("withdrawn")
        let item = UUID().uuidString.lowercased()
        try harness.addBuy("withdrawn", lineItemId: item)
        harness.production.enqueue(FakeAppleServer.rejection([AppleError.outOfRange(item)]))
        try harness.tickUntilSettled()
        #expect(try harness.reports("withdrawn").map(\.state) == [.rejected])
        #expect(Self.criticalLines(harness, containing: "Apple refused every line item") == 1)
        _ = try ReportActions(ledger: harness.ledger).reportNoLineItem("withdrawn")
        try harness.tickUntilSettled()
        let received = harness.production.received
        #expect(received.map { $0.report?.status } == [.lineItem, .noLineItem])
        #expect(Set(received.compactMap { $0.report?.requestIdentifier }).count == 1)
        #expect(try harness.reports("withdrawn").map(\.state) == [.accepted])
        #expect(try harness.ledger.reports.attentionCount() == 0)

        try harness.record("kept")
        try harness.addBuy("kept")
        try harness.tickUntilSettled()
        // What the attention list and the close read to leave `no-line-item` out of their advice.
        #expect(try harness.ledger.reports.attentionFacts(of: "kept").appleHoldsLineItems)
        #expect(try !harness.ledger.reports.attentionFacts(of: "withdrawn").appleHoldsLineItems)
        #expect(throws: ReportActions.Refusal.self) {
            try ReportActions(ledger: harness.ledger).reportNoLineItem("kept")
        }
        // A token that needs no attention is left to reporting: a payment may still be on its way.
        try harness.record("quiet")
        #expect {
            try ReportActions(ledger: harness.ledger).reportNoLineItem("quiet")
        } throws: { error in
            (error as? ReportActions.Refusal)?.kind == .conflict
        }
        #expect(try harness.reports("quiet").isEmpty)
    }

    /// A restated item waits for the token's next report: `NO_LINE_ITEM` right after it was answered 200, and Apple
    /// heard that nobody paid, then the item.
    @Test func noLineItemIsRefusedWhileARestatedItemWaits() throws {
        let harness = try ReportingHarness()
        try harness.record("restated")
        let item = UUID().uuidString.lowercased()
        try harness.addBuy("restated", lineItemId: item)
        harness.production.enqueue(FakeAppleServer.rejection([AppleError.outOfRange(item)]))
        try harness.tickUntilSettled()
        #expect(try harness.reports("restated").map(\.state) == [.rejected])
        let actions = ReportActions(ledger: harness.ledger)
        _ = try actions.restate(
            "restated",
            lineItemId: LineItemID(item),
            body: ReportingHarness.buyJSON(lineItemId: item)
        )
        #expect {
            try actions.reportNoLineItem("restated")
        } throws: { error in
            let refusal = error as? ReportActions.Refusal
            return refusal?.kind == .conflict && refusal?.description.contains("waits to be reported") == true
        }
        try harness.tickUntilSettled()
        #expect(harness.production.received.compactMap { $0.report?.status }.allSatisfy { $0 == .lineItem })
    }

    /// A rejected report of a token a person paid on: `NO_LINE_ITEM` (which a refusal's message offered) would
    /// tell Apple nobody paid and take the sale out of the month's money; it is refused with what to do instead.
    @Test func noLineItemIsRefusedForATokenAPersonPaidOn() throws {
        let harness = try ReportingHarness()
        try harness.record("paid")
        let item = UUID().uuidString.lowercased()
        try harness.addBuy("paid", lineItemId: item)
        harness.production.enqueue(FakeAppleServer.rejection([AppleError.outOfRange(item)]))
        try harness.tickUntilSettled()
        var purchase = PurchaseRecord(
            purchaseId: "cs_paid",
            provider: "stripe",
            checkoutId: nil,
            externalPurchaseId: "paid",
            bundleId: "com.example",
            productId: "pro.lifetime",
            kind: .oneTime,
            status: .paid,
            currency: "EUR",
            amountTotal: 2999,
            amountTax: 0,
            taxCountry: "DEU",
            subscriptionId: nil,
            buyLineItemId: LineItemID(item),
            periodEnd: nil,
            paidDays: 0,
            createdAt: 1,
            updatedAt: 1
        )
        try harness.ledger.payments.apply(PaymentChange(event: nil, outcome: "paid", purchase: purchase, at: 1))
        #expect {
            try ReportActions(ledger: harness.ledger).reportNoLineItem("paid")
        } throws: { error in
            (error as? ReportActions.Refusal)?.description.contains("would tell Apple nobody paid") == true
        }
        #expect(try harness.reports("paid").map(\.status) == [.lineItem])
        // Refunded in full, it was a sale all the same (Apple hears of it as a buy and its refund).
        purchase.status = .refunded
        try harness.ledger.payments.apply(PaymentChange(event: nil, outcome: "refunded", purchase: purchase, at: 2))
        #expect(throws: ReportActions.Refusal.self) {
            try ReportActions(ledger: harness.ledger).reportNoLineItem("paid")
        }
        #expect(try harness.reports("paid").map(\.status) == [.lineItem])
    }

    /// Apple refused every line item of the token's only report, and the operator drops each: nothing is left to
    /// carry, so the rejected report goes again as `NO_LINE_ITEM` under the same identifier, the token is reported
    /// and leaves needs attention.
    @Test func droppingEveryRefusedLineItemReportsTheTokenNoLineItem() throws {
        let harness = try ReportingHarness()
        try harness.record("emptied")
        let (first, second) = (UUID().uuidString.lowercased(), UUID().uuidString.lowercased())
        try harness.addBuy("emptied", lineItemId: first)
        try harness.addBuy("emptied", lineItemId: second)
        harness.production.enqueue(
            FakeAppleServer.rejection([AppleError.outOfRange(first), AppleError.outOfRange(second)])
        )
        try harness.tickUntilSettled()
        #expect(try harness.reports("emptied").map(\.state) == [.rejected])
        let actions = ReportActions(ledger: harness.ledger)
        let dropped = try actions.retract("emptied", lineItemId: LineItemID(first))
        #expect(!dropped.detail.contains("NO_LINE_ITEM"), "a refused item still waits for the operator")
        #expect(try harness.reports("emptied").map(\.state) == [.rejected])
        let last = try actions.retract("emptied", lineItemId: LineItemID(second))
        #expect(last.detail.contains("NO_LINE_ITEM"))
        try harness.tickUntilSettled()
        let received = harness.production.received
        #expect(received.map { $0.report?.status } == [.lineItem, .noLineItem])
        #expect(Set(received.compactMap { $0.report?.requestIdentifier }).count == 1)
        #expect(try harness.reports("emptied").map(\.state) == [.accepted])
        #expect(try harness.ledger.reports.attentionCount() == 0)
        #expect(try harness.ledger.reports.needingAttention(limit: 10).isEmpty)
    }

    /// A line item set aside keeps the identifier of the report it left, which Apple accepted with the rest:
    /// retracting it drops it (Apple never had it) instead of sending Apple a retraction of nothing.
    @Test func retractingASetAsideItemDropsIt() throws {
        let harness = try ReportingHarness()
        try harness.record("dropped")
        let (bad, good) = (UUID().uuidString.lowercased(), UUID().uuidString.lowercased())
        try harness.addBuy("dropped", lineItemId: bad)
        try harness.addBuy("dropped", lineItemId: good)
        harness.production.enqueue(FakeAppleServer.rejection([AppleError.incorrectNetAmount(bad)]))
        try harness.tickUntilSettled()
        #expect(try harness.reports("dropped").map(\.state) == [.accepted])
        let outcome = try ReportActions(ledger: harness.ledger).retract("dropped", lineItemId: LineItemID(bad))
        #expect(outcome.detail.contains("dropped"))
        try harness.tickUntilSettled()
        #expect(harness.production.received.count == 2)
        #expect(try harness.ledger.reports.attentionCount() == 0)
        let good2 = try ReportActions(ledger: harness.ledger).retract("dropped", lineItemId: LineItemID(good))
        #expect(good2.detail.contains("retraction"))
        try harness.tickUntilSettled()
        let retraction = try #require(harness.production.received.last?.report?.lineItems?.first?.common)
        #expect(retraction.lineItemId.rawValue == good)
        #expect(retraction.restatement == true && retraction.erroneouslySubmitted == true)
    }

    /// `GET /admin/purchases`: a set-aside version says so, not the state of the report it left.
    @Test func aSetAsideVersionShowsItsOwnStateInPurchases() throws {
        func item(_ correction: String?, _ correctedAt: Int64?) throws -> StoredLineItem {
            var object: [String: Any] = [
                "rowId": 1, "externalPurchaseId": "t", "lineItemId": "a", "body": "{}", "receivedAt": 0,
                "reportRequestIdentifier": "r",
            ]
            object["correction"] = correction
            object["correctedAt"] = correctedAt
            return try JSONDecoder().decode(StoredLineItem.self, from: JSONSerialization.data(withJSONObject: object))
        }
        var accepted = StoredReport(
            requestIdentifier: "r",
            externalPurchaseId: "t",
            environment: .production,
            bundleId: "com.example",
            status: .lineItem,
            body: "{}",
            nextAttemptAt: 0,
            createdAt: 0
        )
        accepted.state = .accepted
        let reports: [RequestIdentifier: StoredReport] = ["r": accepted]
        #expect(AdminAPI.state(of: try item(nil, nil), reports: reports) == "accepted")
        #expect(AdminAPI.state(of: try item("IncorrectNetAmountError", nil), reports: reports) == "needs_correction")
        #expect(AdminAPI.state(of: try item("IncorrectNetAmountError", 5), reports: reports) == "corrected")
    }

    /// A restatement's outcome names each field it changes, old and new; the restatement flag and the net, which
    /// follow from the rest, are not listed.
    @Test func aRestatementSaysWhatItChanges() {
        let before = #"{"lineItemId":"b","amountTaxInclusive":1000,"taxCountry":"DEU","netAmountTaxExclusive":840}"#
        let after =
            #"{"lineItemId":"b","amountTaxInclusive":1000,"taxCountry":"AUT","netAmountTaxExclusive":900,"restatement":true}"#
        #expect(LineItemChanges.describe(from: before, to: after) == "; changed: taxCountry DEU → AUT")
        #expect(LineItemChanges.describe(from: before, to: before) == "; no field changed")
        #expect(LineItemChanges.describe(from: nil, to: after) == "")
    }
}
