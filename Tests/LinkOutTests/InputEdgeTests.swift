import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// Inputs found by an outside attack run (issue "money right at the edges", 9): an amount near Int64's end is
/// refused where it enters instead of stopping the money views, a line item naming a field twice is refused, and
/// Paddle's route takes no more than Stripe's before a signature is checked.
@Suite("Input edges")
struct InputEdgeTests {
    /// Line item ids are their bytes, as the ledger's SQL and Apple read them: "café" precomposed and "café"
    /// with a combining accent are two ids. A refund naming its buy in the other form is refused (it named no buy
    /// Apple holds), and the buy posted again in the other form is a second buy, not "unchanged".
    @Test func lineItemIdsThatLookAlikeAreTwoIds() throws {
        let setup = try LiveReportingTests.Setup()
        let live = try LiveApplication { setup.configure(&$0, grace: 86_400) }
        let now = Clock.system.nowMilliseconds()
        let token = try live.landProductionToken(at: now)
        let composed = "caf\u{E9}-1"
        let decomposed = "cafe\u{301}-1"
        #expect(composed == decomposed && Array(composed.utf8) != Array(decomposed.utf8))
        #expect(LineItemID(composed) != LineItemID(decomposed))
        #expect(Set([LineItemID(composed), LineItemID(decomposed), LineItemID(composed)]).count == 2)
        #expect(LineItemID(decomposed) < LineItemID(composed))
        func post(_ item: String) throws -> RawClient.Response {
            try live.post(
                "/v1/tokens/\(token.externalPurchaseId)/line-items",
                contentType: "application/json",
                body: #"{"lineItems": [\#(item)]}"#,
                headers: ["Authorization": "Bearer backend-secret"]
            )
        }
        func buy(_ id: String) -> String {
            #"{"lineItemId":"\#(id)","creationDate":\#(now - 60_000),"eventType":"BUY","productType":"ONE_TIME_BUY","#
                + #""productIdentifier":"pro","amountTaxInclusive":2999,"amountTaxExclusive":2999,"taxAmount":0,"#
                + #""netAmountTaxExclusive":2999,"reportingCurrency":"EUR","pricingCurrency":"EUR","#
                + #""taxCountry":"DEU","quantity":1}"#
        }
        #expect(try post(buy(composed)).status == 202)
        let refund =
            #"{"lineItemId":"r-1","creationDate":\#(now - 30_000),"eventType":"REFUND","#
            + #""referenceLineItemId":"\#(decomposed)","amountTaxInclusive":1000,"amountTaxExclusive":1000,"#
            + #""taxAmount":0,"netAmountTaxExclusive":1999,"reportingCurrency":"EUR","pricingCurrency":"EUR","#
            + #""taxCountry":"DEU"}"#
        let refused = try post(refund)
        #expect(refused.status == 400, "\(refused.text)")
        let again = try post(buy(decomposed))
        #expect(again.status == 202 && again.text.contains(#""accepted":1"#), "\(again.text)")
        let stored = try live.application.ledger.reports.lineItems(for: token.externalPurchaseId).map(\.lineItemId)
        #expect(Set(stored) == [LineItemID(composed), LineItemID(decomposed)], "\(stored)")
    }

    @Test func anAbsurdAmountOrARepeatedFieldIsRefusedAndTheMoneyViewsStayUp() throws {
        let setup = try LiveReportingTests.Setup()
        let live = try LiveApplication { setup.configure(&$0, grace: 86_400) }
        let now = Clock.system.nowMilliseconds()
        let token = try live.landProductionToken(at: now)
        func post(_ body: String) throws -> RawClient.Response {
            try live.post(
                "/v1/tokens/\(token.externalPurchaseId)/line-items",
                contentType: "application/json",
                body: body,
                headers: ["Authorization": "Bearer backend-secret"]
            )
        }
        func buy(_ amount: Int64, extra: String = "") -> String {
            #"{"lineItems": [{"lineItemId":"aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa","creationDate":\#(now - 60_000),"#
                + #""eventType":"BUY","productType":"ONE_TIME_BUY","productIdentifier":"pro","#
                + #""amountTaxInclusive":\#(amount),"amountTaxExclusive":\#(amount),"taxAmount":0,"#
                + #""netAmountTaxExclusive":\#(amount),"reportingCurrency":"EUR","pricingCurrency":"EUR","#
                + #""taxCountry":"DEU","quantity":1\#(extra)}]}"#
        }
        let huge = try post(buy(Int64.max))
        #expect(huge.status == 400)
        #expect(huge.text.contains("MaximumValueExceededError"))
        let repeated = try post(buy(29_990, extra: #","amountTaxInclusive":1"#))
        #expect(repeated.status == 400)
        #expect(repeated.text.contains("duplicate_key"))
        let trailing = try post(buy(29_990).replacingOccurrences(of: #""quantity":1}"#, with: #""quantity":1,}"#))
        #expect(trailing.status == 400 && trailing.text.contains("invalid_json"), "\(trailing.text)")
        // An empty list is refused in the shape of every other refused item; a fraction names its field.
        let empty = try post(#"{"lineItems": []}"#)
        #expect(empty.status == 400)
        #expect(empty.text.contains(#""errors":[{"#) && empty.text.contains("MissingLineItemsForStatusError"))
        let fraction = try post(buy(29_990).replacingOccurrences(of: #""taxAmount":0"#, with: #""taxAmount":0.5"#))
        #expect(fraction.status == 400)
        #expect(fraction.text.contains(#""fieldName":"taxAmount""#), "\(fraction.text)")
        #expect(try post(buy(ReportValidator.maximumMilliUnits)).status == 202)
        let admin = ["Authorization": "Bearer admin-secret"]
        for path in ["/admin/revenue", "/admin/close", "/admin/money", "/admin/line-items.csv"] {
            #expect(try live.get(path, headers: admin).status < 500, "\(path)")
        }
        #expect(try live.get("/healthz").status == 200)
    }

    /// Apple's `subscriptionDaysOfPaidService` is a 32-bit integer: one past it is named, not "not valid JSON".
    @Test func aNumberPastItsFieldsIntegerTypeIsNamed() {
        #expect(
            LineItemWholeNumbers.firstOffending(in: ["subscriptionDaysOfPaidService": 2_147_483_648])
                == "subscriptionDaysOfPaidService"
        )
        #expect(LineItemWholeNumbers.firstOffending(in: ["subscriptionDaysOfPaidService": 2_147_483_647]) == nil)
        #expect(LineItemWholeNumbers.firstOffending(in: ["amountTaxInclusive": 2_147_483_648]) == nil)
    }

    @Test func paddlesRouteRefusesABodyOverStripesLimitAsTheHeadArrives() throws {
        let paddle = try FakePaddleServer()
        defer { paddle.stop() }
        let live = try LiveApplication { configuration in
            configuration.payments.provider = .paddle
            configuration.payments[.paddle, "apiKey"] = paddle.apiKey
            configuration.payments[.paddle, "webhookSecret"] = PaddleFlowTests.secret
            configuration.payments[.paddle, "apiBase"] = paddle.apiBase
            configuration.payments[.paddle, "checkoutURL"] = PaddleFlowTests.hostedCheckout
        }
        let head = try RawClient(port: live.port).roundTrip(
            "POST /webhooks/paddle HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(256 * 1024 + 1)\r\n\r\n"
        )
        #expect(head.status == 413)
    }

    /// A caller without the bearer token is answered when the head arrives, its body never read: the server held
    /// a 256 KiB body per connection for each 401 (2,000 such connections took half a gigabyte). Each refusal
    /// counts against the caller as the handler's do, so guessing the token this way is throttled too.
    @Test func aBodyWithoutItsBearerTokenIsRefusedAsTheHeadArrives() throws {
        let live = try LiveApplication {
            $0.apiToken = "backend-secret"
            $0.adminToken = "admin-secret"
        }
        func head(_ path: String, bearer: String) throws -> RawClient.Response {
            try RawClient(port: live.port).roundTrip(
                "POST \(path) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(bearer)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(256 * 1024)\r\n\r\n"
            )
        }
        let api = try head("/v1/tokens/SANDBOX_x/line-items", bearer: "guess")
        #expect(api.status == 401)
        #expect(api.header("Connection") == "close")
        let restate = try head("/admin/tokens/SANDBOX_x/line-items/item/restate", bearer: "guess")
        #expect(restate.status == 401)
        for _ in 0..<8 { #expect(try head("/v1/tokens/SANDBOX_x/line-items", bearer: "guess").status == 401) }
        let throttled = try head("/v1/tokens/SANDBOX_x/line-items", bearer: "backend-secret")
        #expect(throttled.status == 429, "ten refused tokens in a minute: even the right one waits")
    }
}
