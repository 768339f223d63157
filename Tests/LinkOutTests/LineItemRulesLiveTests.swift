import Dispatch
import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Synchronization
import TestSupport
import Testing

@testable import LinkOut
@testable import Storage

/// Apple's correction and reference rules through `POST /v1/tokens/{id}/line-items`: the backend hears of a
/// line item Apple would refuse at once, as a 400 with Apple's error name, and nothing of it is queued.
@Suite("Line item rules, live")
struct LineItemRulesLiveTests {
    /// A refund posted for a buy that is set aside (Apple would refuse it, or did) is refused saying so and what
    /// to do, not as a buy "not known for this token".
    @Test func aRefundOfASetAsideBuyIsRefusedNamingIt() throws {
        let refund = try JSONDecoder().decode(
            LineItem.self,
            from: Data(
                #"""
                {"lineItemId":"r1","creationDate":1,"eventType":"REFUND","referenceLineItemId":"b1",\#
                "amountTaxInclusive":100,"amountTaxExclusive":100,"taxAmount":0,"netAmountTaxExclusive":0,\#
                "reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"DEU"}
                """#.utf8
            )
        )
        var sorted = LineItemsAPI.Sorted()
        sorted.fresh = [(refund, "")]
        let unknown = ReportProblem("NotFoundError", field: "referenceLineItemId", lineItem: "r1", "not known")
        let buy = StoredLineItem(
            rowId: 1,
            externalPurchaseId: "t",
            lineItemId: "b1",
            body: "{}",
            receivedAt: 0,
            correction: "set aside before sending"
        )
        let named = LineItemsAPI.namingSetAside([unknown], of: sorted, [buy])
        #expect(named.first?.message.contains("b1 is set aside as needing correction: restate it first") == true)
        var settled = buy
        settled.correctedAt = 2
        #expect(LineItemsAPI.namingSetAside([unknown], of: sorted, [settled]) == [unknown])
    }

    @Test func itemsAppleWouldRefuseGet400WithApplesErrorName() throws {
        let setup = try LiveReportingTests.Setup()
        let live = try LiveApplication { setup.configure(&$0, grace: 86_400) }
        let now = Clock.system.nowMilliseconds()
        let token = try live.landProductionToken(at: now)
        let path = "/v1/tokens/\(token.externalPurchaseId)/line-items"
        func post(_ items: String) throws -> RawClient.Response {
            try live.post(
                path,
                contentType: "application/json",
                body: #"{"lineItems": [\#(items)]}"#,
                headers: ["Authorization": "Bearer backend-secret"]
            )
        }
        let created = now - 3_600_000
        let buy =
            #"{"lineItemId":"aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa","creationDate":\#(created),"eventType":"BUY","productType":"ONE_TIME_BUY","productIdentifier":"example.one-time-buy.product","amountTaxInclusive":10000,"amountTaxExclusive":8000,"taxAmount":2000,"netAmountTaxExclusive":8000,"reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"ESP","quantity":6}"#
        #expect(try post(buy).status == 202)

        // A restatement must keep the creationDate the item was reported with.
        let moved = buy.replacingOccurrences(of: "\(created)", with: "\(created + 1000)")
            .replacingOccurrences(of: #""quantity":6"#, with: #""quantity":6,"restatement":true"#)
        let restated = try post(moved)
        #expect(restated.status == 400)
        #expect(restated.text.contains("RestatementCreationDateMismatchError"))

        // A subscription item's reference is the subscription's start, never a one-time buy.
        let renewal =
            #"{"lineItemId":"dddddddd-dddd-dddd-dddd-dddddddddddd","creationDate":\#(created),"eventType":"BUY","productType":"SUBSCRIPTION","productIdentifier":"example.subscription.monthly","amountTaxInclusive":10000,"amountTaxExclusive":8000,"taxAmount":2000,"netAmountTaxExclusive":8000,"reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"ESP","subscriptionEvent":"RENEWAL","subscriptionStartDate":\#(created),"subscriptionEndDate":\#(created + 2_592_000_000),"subscriptionDaysOfPaidService":30,"referenceLineItemId":"aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa","quantity":1}"#
        let wrongReference = try post(renewal)
        #expect(wrongReference.status == 400)
        #expect(wrongReference.text.contains("ReferenceInvalidSubscriptionEventError"))

        // A SUBSCRIPTION_PAYMENT of nothing.
        let payment =
            #"{"lineItemId":"eeeeeeee-eeee-eeee-eeee-eeeeeeeeeeee","creationDate":\#(created),"eventType":"BUY","productType":"SUBSCRIPTION","productIdentifier":"example.subscription.monthly","amountTaxInclusive":0,"amountTaxExclusive":0,"taxAmount":0,"netAmountTaxExclusive":0,"reportingCurrency":"EUR","pricingCurrency":"EUR","taxCountry":"ESP","subscriptionEvent":"SUBSCRIPTION_PAYMENT","subscriptionStartDate":\#(created),"subscriptionEndDate":\#(created + 2_592_000_000),"subscriptionDaysOfPaidService":30,"quantity":1}"#
        let zero = try post(payment)
        #expect(zero.status == 400)
        #expect(zero.text.contains("InvalidTaxInclusiveAmountForSubscriptionPaymentError"))

        // JSON, but a number no field can hold: the answer names the field and says it must be in its range.
        let huge = try post(
            payment.replacingOccurrences(
                of: #""subscriptionDaysOfPaidService":30"#,
                with: #""subscriptionDaysOfPaidService":9223372036854775807"#
            )
        )
        #expect(huge.status == 400)
        #expect(
            huge.text.contains(#""fieldName":"subscriptionDaysOfPaidService""#)
                && huge.text.contains("in its field's range"),
            "\(huge.text)"
        )

        // A field of another kind of item on a one-time buy is refused by name, not dropped while the buy is taken.
        let misplaced = try post(
            buy.replacingOccurrences(of: "aaaaaaaa-aaaa", with: "ffffffff-aaaa").replacingOccurrences(
                of: #""quantity":6"#,
                with: #""quantity":6,"referenceLineItemId":"x","subscriptionStartDate":-9223372036854775808"#
            )
        )
        #expect(misplaced.status == 400)
        #expect(
            misplaced.text.contains("FieldNotAllowedError")
                && misplaced.text.contains(#""fieldName":"referenceLineItemId""#)
                && misplaced.text.contains(#""fieldName":"subscriptionStartDate""#),
            "\(misplaced.text)"
        )

        // A null is an absent field, as the decoder reads it: a backend writing every optional as null is taken.
        let nulls = buy.replacingOccurrences(of: "aaaaaaaa-aaaa", with: "abababab-aaaa").replacingOccurrences(
            of: #""quantity":6"#,
            with: #""quantity":6,"referenceLineItemId":null,"subscriptionEvent":null"#
        )
        #expect(try post(nulls).status == 202)

        // Nothing refused was queued: the token holds the buys, as first posted.
        let stored = try live.application.ledger.reports.lineItems(for: token.externalPurchaseId)
        #expect(
            stored.map(\.lineItemId) == [
                "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa", "abababab-aaaa-aaaa-aaaa-aaaaaaaaaaaa",
            ]
        )
    }

    /// Posts that arrive at the same moment are judged as if one came after the other: one line item id on two
    /// tokens of the app is taken once (Apple would get the sale twice), two full refunds of one buy once.
    @Test func postsAtTheSameMomentAreJudgedOneAfterTheOther() throws {
        let setup = try LiveReportingTests.Setup()
        let live = try LiveApplication { setup.configure(&$0, grace: 86_400) }
        let now = Clock.system.nowMilliseconds()
        func land() throws -> String {
            let (token, path) = TokenMinter.exampleLanding(at: now)
            #expect(try live.get(path).status == 303)
            return token.externalPurchaseId.rawValue
        }
        func request(_ token: String, _ item: String) -> String {
            let body = #"{"lineItems": [\#(item)]}"#
            return "POST /v1/tokens/\(token)/line-items HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer backend-secret\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        }
        func together(_ requests: [String]) -> [Int] {
            let statuses = Mutex<[Int]>([])
            let connected = Mutex(0)
            let go = DispatchSemaphore(value: 0)
            let port = live.port
            DispatchQueue.concurrentPerform(iterations: requests.count) { index in
                // Each connects first; all send once every one has connected.
                let client = try? RawClient(port: port)
                let last = connected.withLock { count in
                    count += 1
                    return count == requests.count
                }
                if last { for _ in 1..<requests.count { go.signal() } } else { go.wait() }
                let status = (try? client?.roundTrip(requests[index]).status) ?? 0
                statuses.withLock { $0.append(status) }
            }
            return statuses.withLock { $0 }.sorted()
        }
        // A renewal held for a token of the customer waits apart from the token's items: posts still go through.
        let holder = try land()
        try live.application.ledger.database.writer.write { connection throws(StorageError) in
            try connection.query(
                """
                INSERT INTO line_items (external_purchase_id, line_item_id, body, received_at, held_since)
                VALUES (?, 'held-renewal', '{}', 1, 1)
                """,
                [.text(holder)]
            )
        }
        #expect(together([request(holder, MonthTraffic.buy(MonthTraffic.newId(), at: now - 3_600_000))]) == [202])
        // A refund and its buy in one post are judged buy first, whichever comes first in the list.
        let refundFirst = MonthTraffic.newId()
        let pair =
            MonthTraffic.refund(MonthTraffic.newId(), of: refundFirst, at: now - 1000) + ","
            + MonthTraffic.buy(refundFirst, at: now - 3_600_000)
        #expect(together([request(try land(), pair)]) == [202])
        for _ in 0..<6 {
            let (first, second) = (try land(), try land())
            let buy = MonthTraffic.newId()
            let item = MonthTraffic.buy(buy, at: now - 3_600_000)
            #expect(together([request(first, item), request(second, item)]) == [202, 400])
            let refunds = (0..<2).map { _ in MonthTraffic.refund(MonthTraffic.newId(), of: buy, at: now - 1000) }
            let owner = try #require(
                try live.application.ledger.notifications.lineItemOwners([LineItemID(buy)], bundleId: "com.example")[
                    LineItemID(buy)
                ]
            )
            #expect(together(refunds.map { request(owner.rawValue, $0) }) == [202, 400])
        }
    }

    /// A token reported DUPLICATE_TOKEN is one "you recognise but are not using to report transactions" (Apple):
    /// a sale posted on it afterwards is refused, not reported on it.
    @Test func aTokenReportedAsADuplicateTakesNoLineItems() throws {
        let setup = try LiveReportingTests.Setup()
        let live = try LiveApplication { setup.configure(&$0, grace: 86_400) }
        let account = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let now = Clock.system.nowMilliseconds()
        let copies = (0..<2).map { _ in
            TokenMinter.mint(
                bundleId: "com.example",
                appAppleId: 1_234_567_890,
                sandbox: false,
                tokenType: "SERVICES",
                nowMilliseconds: now - 10_000
            )
        }.map { token in
            var refreshed = token
            refreshed.tokenExpirationDate = now + 3_600_000
            return refreshed
        }
        for copy in copies {
            let forwarded = try live.post(
                "/v1/tokens",
                contentType: "application/json",
                body: #"{"token": "\#(TokenMinter.encode(copy))", "appAccountToken": "\#(account)"}"#
            )
            #expect(forwarded.status == 201, "\(forwarded.text)")
        }
        // Polls progress; not a race guard.
        #expect(eventually(within: 30) { setup.apple.received.contains { $0.report?.status == .duplicateToken } })
        let duplicate = try #require(
            setup.apple.received.first { $0.report?.status == .duplicateToken }?.report?.externalPurchaseId
        )
        let item = MonthTraffic.buy(MonthTraffic.newId(), at: now - 1000)
        let posted = try live.post(
            "/v1/tokens/\(duplicate)/line-items",
            contentType: "application/json",
            body: #"{"lineItems": [\#(item)]}"#,
            headers: ["Authorization": "Bearer backend-secret"]
        )
        #expect(posted.status == 409 && posted.text.contains("duplicate_token"), "\(posted.status) \(posted.text)")
    }
}
