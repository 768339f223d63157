import Dispatch
import Domain
import ExternalPurchase
import Foundation
import HTTPServer
import Lifecycle
import Payments
import Storage
import Synchronization
import TestSupport
import Testing

@testable import LinkOut

/// The landing flow end to end over real sockets: StoreKit's redirect, the checkout page, the app's API.
@Suite("Landing flow")
struct LandingFlowTests {
    func cookie(_ response: RawClient.Response) -> String? {
        response.header("Set-Cookie")?.split(separator: ";").first.map(String.init)
    }

    @Test func applesDocumentedURLLeadsToTheCheckoutAndRepeatsLandOnIt() throws {
        let live = try LiveApplication()
        let first = try live.get(AppleVectors.documentedTarget)
        #expect(first.status == 303)
        #expect(first.header("Referrer-Policy") == "no-referrer")
        let location = try #require(first.header("Location"))
        #expect(location.hasPrefix("/checkout/"))
        #expect(!location.contains(AppleVectors.v1))
        let session = try #require(cookie(first))
        #expect(first.header("Set-Cookie")?.contains("HttpOnly") == true)
        #expect(first.header("Set-Cookie")?.contains("SameSite=Lax") == true)
        #expect(first.header("Set-Cookie")?.contains("Secure") == false)

        let page = try live.get(location, headers: ["Cookie": session])
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.text.contains("Pro forever"))
        #expect(page.text.contains("€29.99"))
        #expect(page.text.contains("name=\"csrf\""))
        #expect(!page.text.contains(AppleVectors.v1))
        #expect(page.header("Content-Security-Policy")?.contains("default-src 'none'") == true)

        var rows = try live.ledger().tokens.tokens()
        #expect(rows.map(\.token.externalPurchaseId) == ["00000000-0000-0000-0000-000000000000"])
        #expect(rows.first?.visitCount == 1)
        #expect(rows.first?.token.environment == .production)

        let second = try live.get(AppleVectors.documentedTarget, headers: ["Cookie": session])
        #expect(second.header("Location") == location)
        #expect(try #require(cookie(second)) != session, "every landing starts a fresh session")
        rows = try live.ledger().tokens.tokens()
        #expect(rows.first?.visitCount == 2)
        // A link that already carries the bundle ID StoreKit appends again: the same value twice is one.
        let repeated = try live.get(AppleVectors.documentedTarget + "&bundleId=com.example")
        #expect(repeated.header("Location") == location)
    }

    @Test func everyAppleVectorIsRecordedWithItsEnvironment() throws {
        let live = try LiveApplication()
        for token in [AppleVectors.v2, AppleVectors.v3, AppleVectors.v4] {
            let encoded = token.replacingOccurrences(of: "=", with: "%3D")
            #expect(try live.get("/?externalPurchaseToken=\(encoded)&bundleId=com.example").status == 303)
        }
        let rows = try live.ledger().tokens.tokens()
        let sandbox = try #require(rows.first { $0.token.externalPurchaseId.rawValue.hasPrefix("SANDBOX") })
        #expect(sandbox.token.environment == .sandbox)
        #expect(sandbox.visitCount == 2)  // V3 and V4 carry the same externalPurchaseId
        #expect(sandbox.token.tokenType == "SERVICES")
        let production = try #require(
            rows.first { $0.token.externalPurchaseId == "00000000-0000-0000-0000-000000000000" }
        )
        #expect(production.token.environment == .production)
    }

    @Test(
        "invalid links get a 400 page naming the problem and record nothing",
        arguments: [
            ("/?externalPurchaseToken=%%%&bundleId=com.example", "changed or cut off", "not_base64"),
            ("/?externalPurchaseToken=bm90IGpzb24&bundleId=com.example", "changed or cut off", "not_json"),
            (
                "/?externalPurchaseToken=\(AppleVectors.v1)&bundleId=com.other",
                "made for a different app",
                "bundle_id_mismatch"
            ),
            (
                "/?externalPurchaseToken="
                    + Base64URL.encode(
                        Array(#"{"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":1}"#.utf8)
                    ), "incomplete", "missing_field"
            ),
            (
                "/?externalPurchaseToken="
                    + Base64URL.encode(
                        Array(
                            #"{"appAppleId":1234567890,"bundleId":"com.other","tokenCreationDate":1,"externalPurchaseId":"x"}"#
                                .utf8
                        )
                    ), "does not sell for", "bundle_id_not_configured"
            ),
            (
                "/?externalPurchaseToken="
                    + Base64URL.encode(
                        Array(
                            #"{"appAppleId":99,"bundleId":"com.example","tokenCreationDate":1,"externalPurchaseId":"x"}"#
                                .utf8
                        )
                    ), "made for a different app", "app_apple_id_mismatch"
            ),
            // A 19-digit number once overflowed the token reader and stopped the server.
            (
                "/?externalPurchaseToken=eyJhIjo5OTk5OTk5OTk5OTk5OTk5OTk5fQ&bundleId=com.example", "incomplete",
                "missing_field"
            ),
            ("/?externalPurchaseToken=" + String(repeating: "A", count: 5000), "longer than any link", "too_long"),
            // Given twice with different values: the first counted, and a filter in front may have read the other.
            (
                "/?externalPurchaseToken=\(AppleVectors.v1)&externalPurchaseToken=\(AppleVectors.v4)&bundleId=com.example",
                "part of it was changed", "duplicate_field"
            ),
            (
                "/?externalPurchaseToken=\(AppleVectors.v1)&bundleId=com.example&bundleId=com.other",
                "part of it was changed", "duplicate_field"
            ),
            ("/?bundleId=com.unknown", "does not sell for", "bundle_id_not_configured"),
            (
                "/?externalPurchaseToken="
                    + Base64URL.encode(
                        Array(
                            #"{"appAppleId":1234567890,"bundleId":"com.example","bundleId":"com.evil","#
                                .utf8
                        )
                            + Array(#""tokenCreationDate":1,"externalPurchaseId":"x"}"#.utf8)
                    ), "part of it was changed.", "duplicate_field"
            ),
            (
                "/?externalPurchaseToken="
                    + Base64URL.encode(
                        Array(
                            #"{"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":1,"#.utf8
                        ) + Array(#""externalPurchaseId":"../../admin/tokens"}"#.utf8)
                    ), "purchase number that is not valid", "invalid_external_purchase_id"
            ),
            // A made-up type, or a date 23 hours ahead, once landed first and stuck to a known id.
            (
                "/?externalPurchaseToken="
                    + Base64URL.encode(
                        Array(
                            #"{"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":1764500000000,"#
                                .utf8
                        ) + Array(#""externalPurchaseId":"x","tokenType":"FOO"}"#.utf8)
                    ), "a kind the App Store does not make", "unknown_token_type"
            ),
            (
                "/?externalPurchaseToken="
                    + Base64URL.encode(
                        Array(
                            #"{"appAppleId":1234567890,"bundleId":"com.example","externalPurchaseId":"x","#.utf8
                        ) + Array(#""tokenCreationDate":\#(Clock.system.nowMilliseconds() + 23 * 3_600_000)}"#.utf8)
                    ), "a date in the future", "creation_date_in_future"
            ),
        ]
    )
    func rejects(target: String, words: String, reason: String) throws {
        let live = try LiveApplication()
        let response = try live.get(target)
        #expect(response.status == 400)
        #expect(response.text.contains(words))
        #expect(!response.text.contains("token"), "plain words, no jargon")
        // No dead end: the way back into the app, and the request id to quote to support.
        #expect(response.text.contains(#"<a class="button" href="https://example.com/open">Open Example</a>"#))
        let requestId = try #require(response.header("X-Request-Id"))
        #expect(response.text.contains("Reference: <span>\(requestId)</span>"))
        #expect(response.header("Content-Type") == "text/html; charset=utf-8")
        #expect(try live.ledger().tokens.count(.visits) == 0)
        #expect(try live.ledger().tokens.count(.tokens) == 0)
        let metrics = try live.get("/metrics").text
        // Every reason is registered at 0, so only a count of 1 shows this rejection was counted, and counted once.
        #expect(metrics.contains("linkout_tokens_rejected_total{reason=\"\(reason)\"} 1\n"), "\(reason)")
    }

    @Test func headAnswersLikeGetButRecordsNothing() throws {
        let live = try LiveApplication()
        let head = try live.client().roundTrip(
            "HEAD \(AppleVectors.documentedTarget) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
        )
        #expect(head.status == 303)
        #expect(head.header("Location")?.hasPrefix("/checkout/") == true)
        #expect(try live.ledger().tokens.count(.tokens) == 0)
        let get = try live.get(AppleVectors.documentedTarget)
        #expect(get.header("Location") == head.header("Location"))
    }

    /// A parameter named twice is read the first time (README "What happens to a visit"), the campaign values
    /// too: the second `utm_medium` was kept over the first.
    @Test func aParameterNamedTwiceIsReadTheFirstTime() {
        let request = HTTPRequest(
            method: "GET",
            target: "/?utm_medium=first&bundleId=com.example&utm_medium=second&bundleId=com.other",
            version: .http1_1
        )
        let query = LandingRoute.Query(request)
        #expect(query.utm["utm_medium"] == "first")
        #expect(query.bundleId == BundleID("com.example"))
    }

    /// A campaign value keeps no hidden character (a bidi override showed `moc.evil` to the operator as
    /// `live.com`; a control reached the dashboard's HTML) and at most 200 Unicode scalars: cut by characters, an
    /// `a` with a thousand combining marks counted as one.
    @Test func aCampaignValueKeepsNoHiddenCharacterAndAtMost200Scalars() {
        let request = HTTPRequest(
            method: "GET",
            target: "/?utm_source=%E2%80%AElive.com%01%0A&utm_term=a" + String(repeating: "%CC%81", count: 900)
                + "&utm_campaign=" + String(repeating: "%C3%A9", count: 300),
            version: .http1_1
        )
        let query = LandingRoute.Query(request)
        #expect(query.utm["utm_source"] == "live.com")
        #expect(query.utm["utm_term"]?.unicodeScalars.count == 200)
        #expect(query.utm["utm_campaign"] == String(repeating: "é", count: 200))
    }

    @Test func tokenlessVisitsFollowTheConfiguration() throws {
        let open = try LiveApplication()
        let visit = try open.get("/?utm_source=newsletter")
        #expect(visit.status == 303)
        #expect(try open.ledger().tokens.count(.visits) == 1)
        #expect(try open.get(try #require(visit.header("Location"))).text.contains("Pro forever"))

        let closed = try LiveApplication { $0.landing.allowWithoutToken = false }
        let page = try closed.get("/", headers: ["Accept-Language": "de"])
        #expect(page.status == 200)
        #expect(page.text.contains("Bitte öffne diese Seite aus der App"))
        #expect(try closed.ledger().tokens.count(.visits) == 0)
    }

    @Test func checkoutFormNeedsTheSessionsCSRFTokenAndRecordsTheIntent() throws {
        let live = try LiveApplication()
        let landing = try live.get(AppleVectors.documentedTarget)
        let location = try #require(landing.header("Location"))
        let session = try #require(cookie(landing))
        let page = try live.get(location, headers: ["Cookie": session, "Accept-Language": "de-DE"])
        #expect(page.text.contains("29,99"))
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        let form = "csrf=\(csrf)&currency=EUR&product=pro.lifetime"
        let form415 = try live.post(location, contentType: "text/plain", body: form, headers: ["Cookie": session])
        #expect(form415.status == 415)
        let utf16 = try live.post(
            location,
            contentType: "application/x-www-form-urlencoded; charset=utf-16",
            body: form,
            headers: ["Cookie": session]
        )
        #expect(utf16.status == 415)
        let noCookie = try live.post(location, contentType: "application/x-www-form-urlencoded", body: form)
        #expect(noCookie.status == 403)
        let otherSession = try live.post(
            location,
            contentType: "application/x-www-form-urlencoded",
            body: form,
            headers: ["Cookie": "linkout_session=aaaaaaaaaaaaaaaaaaaaaaaaaa"]
        )
        #expect(otherSession.status == 403)
        let badProduct = try live.post(
            location,
            contentType: "application/x-www-form-urlencoded",
            body: "csrf=\(csrf)&currency=EUR&product=nope",
            headers: ["Cookie": session]
        )
        #expect(badProduct.status == 400)
        #expect(try live.ledger().tokens.count(.checkoutIntents) == 0)
        let done = try live.post(
            location,
            contentType: "application/x-www-form-urlencoded",
            body: form,
            headers: ["Cookie": session]
        )
        #expect(done.status == 303)
        let payment = try #require(done.header("Location"))
        #expect(payment.hasPrefix("/pay/demo/"))
        // The same form again (a double tap) goes to the same payment: one intent, one session.
        let again = try live.post(
            location,
            contentType: "application/x-www-form-urlencoded",
            body: form,
            headers: ["Cookie": session]
        )
        #expect(again.header("Location") == payment)
        #expect(try live.ledger().tokens.count(.checkoutIntents) == 1)
        // The amount button pressed decides (without the stylesheet every one shows), whatever radio is checked.
        #expect(page.text.contains(#"name="pay_for" value="pro.monthly""#))
        let pressed = try live.post(
            location,
            contentType: "application/x-www-form-urlencoded",
            body: "csrf=\(csrf)&currency=EUR&product=pro.lifetime&pay_for=pro.monthly",
            headers: ["Cookie": session]
        )
        #expect(pressed.status == 303)
        let intents = try live.ledger().tokens.checkoutIntents(
            checkoutId: CheckoutID(String(location.dropFirst("/checkout/".count)))
        )
        #expect(intents.last?.productId == "pro.monthly")
        #expect(try live.get("/checkout/aaaaaaaaaaaaaaaaaaaaaaaaaa").status == 404)
        #expect(try live.get("/checkout/not-an-id").status == 404)
    }

    /// A session id planted before the landing (over http anyone on the path, or a neighbouring host, can set
    /// the cookie; the planter got the id from the server itself) is replaced by the landing, so the planter
    /// does not share the buyer's checkout; the checkout's form works with the new id.
    @Test func theLandingReplacesAPlantedSession() throws {
        let live = try LiveApplication()
        let planter = try live.get("/?utm_source=planter")
        let planted = try #require(cookie(planter))
        #expect(planted.hasPrefix("linkout_session="))

        let landing = try live.get(AppleVectors.documentedTarget, headers: ["Cookie": planted])
        #expect(landing.status == 303)
        let fresh = try #require(cookie(landing))
        #expect(fresh.hasPrefix("linkout_session="))
        #expect(fresh != planted)
        #expect(landing.header("Set-Cookie")?.contains("HttpOnly; SameSite=Lax") == true)

        let location = try #require(landing.header("Location"))
        let page = try live.get(location, headers: ["Cookie": fresh])
        #expect(page.header("Set-Cookie") == nil, "the checkout keeps the landing's session")
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        let form = "csrf=\(csrf)&currency=EUR&product=pro.lifetime"
        let withPlanted = try live.post(
            location,
            contentType: "application/x-www-form-urlencoded",
            body: form,
            headers: ["Cookie": planted]
        )
        #expect(withPlanted.status == 403)
        let paid = try live.post(
            location,
            contentType: "application/x-www-form-urlencoded",
            body: form,
            headers: ["Cookie": fresh]
        )
        #expect(paid.status == 303)
        #expect(paid.header("Location")?.hasPrefix("/pay/demo/") == true)
        // A HEAD records nothing and sets nothing.
        let head = try live.get(AppleVectors.documentedTarget, headers: ["Cookie": planted], method: "HEAD")
        #expect(head.header("Set-Cookie") == nil)
    }

    @Test func currencyFollowsTheOverrideThenTheRegion() throws {
        let live = try LiveApplication()
        let location = try #require(try live.get(AppleVectors.documentedTarget).header("Location"))
        #expect(try live.get(location + "?currency=USD").text.contains("$29.99"))
        #expect(try live.get(location, headers: ["Accept-Language": "en-US"]).text.contains("$29.99"))
        #expect(try live.get(location, headers: ["Accept-Language": "en-GB"]).text.contains("€29.99"))
        #expect(try live.get(location + "?currency=XYZ").text.contains("€29.99"))
    }

    @Test func anExpiredCustomLinkTokenIsRecordedButTakesNoNewPurchase() throws {
        let live = try LiveApplication()
        let landing = try live.get("/?externalPurchaseToken=\(AppleVectors.v2)&bundleId=com.example")
        #expect(landing.status == 303)
        let page = try live.get(try #require(landing.header("Location")))
        #expect(page.text.contains("This purchase link is too old"))
        #expect(!page.text.contains("<form"))
        // Not a dead end: the button leads back to the app for a fresh link.
        #expect(page.text.contains(#"<a class="button" href="https://example.com/open">Open Example</a>"#))
        #expect(try live.ledger().tokens.count(.tokens) == 1)
    }

    @Test func appForwardedTokens() throws {
        let live = try LiveApplication()
        let body = #"{"token": "\#(AppleVectors.v3)", "appAccountToken": "7E3FB20B-4CDB-47CC-936D-99D65F608138"}"#
        let created = try live.post("/v1/tokens", contentType: "application/json", body: body)
        #expect(created.status == 201)
        let reply = try JSONDecoder().decode([String: String].self, from: Data(created.body))
        #expect(reply["externalPurchaseId"] == "SANDBOX_00000000-0000-0000-0000-000000000000")
        #expect(reply["environment"] == "sandbox")
        #expect(reply["checkoutURL"]?.hasPrefix("http://localhost:8080/checkout/") == true)
        let again = try live.post("/v1/tokens", contentType: "application/json", body: body)
        #expect(again.status == 200)
        let row = try #require(try live.ledger().tokens.tokens().first)
        #expect(row.source == .app)

        let wrongType = try live.post("/v1/tokens", contentType: "text/plain", body: body)
        #expect(wrongType.status == 415)
        let huge = try live.post(
            "/v1/tokens",
            contentType: "application/json",
            body: #"{"token": ""# + String(repeating: "a", count: 20_000) + #""}"#
        )
        #expect(huge.status == 413)
        let invalid = try live.post("/v1/tokens", contentType: "application/json", body: #"{"token": "!!"}"#)
        #expect(invalid.status == 400)
        let error = try JSONDecoder().decode([String: [String: String]].self, from: Data(invalid.body))
        #expect(error["error"]?["code"] == "not_base64")
        #expect(try live.post("/v1/tokens", contentType: "application/json", body: "[]").status == 400)
        let badAccount = try live.post(
            "/v1/tokens",
            contentType: "application/json",
            body: #"{"token": "\#(AppleVectors.v1)", "appAccountToken": "nope"}"#
        )
        #expect(badAccount.status == 400)
    }

    @Test func noRawTokenEverReachesTheLog() throws {
        let live = try LiveApplication()
        _ = try live.get(AppleVectors.documentedTarget)
        _ = try live.get("/?externalPurchaseToken=\(AppleVectors.v1)&bundleId=com.other")
        _ = try live.post("/v1/tokens", contentType: "application/json", body: #"{"token": "\#(AppleVectors.v3)"}"#)
        let log = live.logLines.all.joined(separator: "\n")
        #expect(!log.isEmpty)
        for token in [AppleVectors.v1, AppleVectors.v3, String(AppleVectors.v1.prefix(40))] {
            #expect(!log.contains(token))
        }
    }

    /// A double click on Pay sends the form twice at once: while the first request's call to the provider is
    /// under way, the others wait for it and go to the same payment page (a browser shows the last answer, which
    /// must not be the "payment is not available" page), and the provider makes one session.
    @Test func formsPostedAtOnceAllGoToTheOnePayment() throws {
        let stripe = try FakeStripeServer()
        defer { stripe.stop() }
        let live = try LiveApplication {
            $0.payments.provider = .stripe
            $0.payments[.stripe, "secretKey"] = stripe.secretKey
            $0.payments[.stripe, "webhookSecret"] = "whsec_double_click_0123456789"
            $0.payments[.stripe, "apiBase"] = stripe.apiBase
        }
        let landing = try live.get(AppleVectors.documentedTarget)
        let location = try #require(landing.header("Location"))
        let session = try #require(cookie(landing))
        let page = try live.get(location, headers: ["Cookie": session])
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        let body = "csrf=\(csrf)&currency=EUR&product=pro.lifetime"
        let request =
            "POST \(location) HTTP/1.1\r\nHost: t\r\nCookie: \(session)\r\n"
            + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        stripe.enqueue(.slow(milliseconds: 400))
        let answers = Mutex<[(status: Int, location: String?)]>([])
        let port = live.port
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            let answer = try? RawClient(port: port).roundTrip(request)
            answers.withLock { $0.append((answer?.status ?? 0, answer?.header("Location"))) }
        }
        let all = answers.withLock { $0 }
        #expect(all.allSatisfy { $0.status == 303 }, "\(all.map(\.status))")
        #expect(Set(all.compactMap(\.location)).count == 1, "\(all.map(\.location))")
        #expect(stripe.sessionsCreated == 1)
    }
}
