import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// The way back into the app: the result page's link carries a single-use code, the developer's backend
/// redeems it once, and hears of the purchase from a signed webhook that survives failures and restarts.
@Suite("Back in the app")
struct EntitlementTests {
    static let secret = "hook-secret-for-tests"

    /// A demo purchase through the pages; returns the result page and the cookie.
    static func demoPurchase(_ live: LiveApplication, landingOn target: String = AppleVectors.documentedTarget) throws
        -> (result: RawClient.Response, resultPath: String, cookie: String)
    {
        let landing = try live.get(target)
        let checkout = try #require(landing.header("Location"))
        let cookie = try #require(landing.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let page = try live.get(checkout, headers: ["Cookie": cookie])
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        let form = "application/x-www-form-urlencoded"
        let payment = try #require(
            try live.post(
                checkout,
                contentType: form,
                body: "csrf=\(csrf)&currency=EUR&product=pro.lifetime",
                headers: ["Cookie": cookie]
            )
            .header("Location")
        )
        let demo = try live.get(payment, headers: ["Cookie": cookie])
        let demoCSRF = try #require(demo.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        let done = try #require(
            try live.post(
                payment,
                contentType: form,
                body: "csrf=\(demoCSRF)&action=complete",
                headers: ["Cookie": cookie]
            )
            .header("Location")
        )
        let iPhone = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X)"
        return (try live.get(done, headers: ["User-Agent": iPhone, "Cookie": cookie]), done, cookie)
    }

    static func redeem(_ live: LiveApplication, _ code: String) throws -> RawClient.Response {
        try live.post(
            "/v1/redemptions",
            contentType: "application/json",
            body: #"{"code": "\#(code)"}"#,
            headers: ["Authorization": "Bearer backend-secret"]
        )
    }

    @Test func theCodeInTheAppLinkIsRedeemedOnceAndExpires() throws {
        let time = ManualClock()
        let live = try LiveApplication(clock: time.clock) { $0.apiToken = "backend-secret" }
        let (result, resultPath, cookie) = try Self.demoPurchase(live)
        #expect(result.text.contains("Open Example"))
        let code = String(
            try #require(result.text.firstMatch(of: /href="https:\/\/example\.com\/open\?code=([a-z2-7]{32})"/)?.1)
        )
        #expect(result.text.contains("example://purchase?code=\(code)"))
        // A phone gets the button; a desktop browser also gets the code to scan or type.
        #expect(!result.text.contains("<code>"))
        let desktop = try live.get(
            resultPath,
            headers: ["User-Agent": "Mozilla/5.0 (X11; Linux x86_64)", "Cookie": cookie]
        )
        #expect(desktop.text.contains("<code>\(code)</code>"))
        let qrPath = String(
            try #require(
                desktop.text.firstMatch(of: /src="(\/checkout\/[a-z2-7]+\/qr\.svg\?session_id=[a-z0-9_]+)"/)?.1
            )
        )
        let qr = try live.get(qrPath, headers: ["Cookie": cookie])
        #expect(qr.status == 200)
        #expect(qr.header("Content-Type") == "image/svg+xml")
        #expect(qr.text.hasPrefix("<svg") && qr.text.contains("<path"))
        #expect(try live.get(qrPath).status == 404)  // another browser
        let otherSession = qrPath.replacingOccurrences(of: "session_id=demo_", with: "session_id=demo_x")
        #expect(try live.get(otherSession, headers: ["Cookie": cookie]).status == 404)
        // Link previews and HEAD requests look at the page; they never use the code up, and a browser other than
        // the one that paid (a preview bot, someone the link was shared with) sees the payment but not the code.
        #expect(try live.get(resultPath, headers: ["Cookie": cookie], method: "HEAD").status == 200)
        let preview = try live.get(
            resultPath,
            headers: ["User-Agent": "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"]
        )
        #expect(preview.text.contains("Demo payment completed"))
        #expect(!preview.text.contains(code))
        #expect(try live.get(resultPath, headers: ["Cookie": cookie]).text.contains(code))
        let first = try Self.redeem(live, code)
        #expect(first.status == 200)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(first.body)) as? [String: Any])
        let purchase = try #require(body["purchase"] as? [String: Any])
        #expect(purchase["productId"] as? String == "pro.lifetime")
        #expect(purchase["externalPurchaseId"] as? String == "00000000-0000-0000-0000-000000000000")
        #expect(purchase["status"] as? String == "paid")
        #expect(purchase["test"] as? Bool == true)  // a demo payment: no money changed hands
        let second = try Self.redeem(live, code)
        #expect(second.status == 409)
        #expect(second.text.contains("already_redeemed"))
        // A backend whose first answer was lost learns the purchase from the second.
        let again = try #require(try JSONSerialization.jsonObject(with: Data(second.body)) as? [String: Any])
        #expect((again["purchase"] as? [String: Any])?["purchaseId"] as? String == purchase["purchaseId"] as? String)
        #expect((again["purchase"] as? [String: Any])?["productId"] as? String == "pro.lifetime")
        #expect(try Self.redeem(live, code.uppercased()).status == 409)
        #expect(try Self.redeem(live, String(repeating: "a", count: 32)).status == 404)
        #expect(try Self.redeem(live, "short").status == 400)
        #expect(
            try live.post("/v1/redemptions", contentType: "application/json", body: #"{"code": "\#(code)"}"#).status
                == 401
        )
        let purchases = try live.get(
            "/v1/purchases?externalPurchaseId=00000000-0000-0000-0000-000000000000",
            headers: ["Authorization": "Bearer backend-secret"]
        )
        #expect(purchases.text.contains(#""productId":"pro.lifetime""#))
        time.advance(seconds: 86_400 + 60)
        let stale = try live.get(resultPath, headers: ["Cookie": cookie])
        let staleCode = String(try #require(stale.text.firstMatch(of: /code=([a-z2-7]{32})/)?.1))
        #expect(staleCode == code)
    }

    @Test func anExpiredCodeIsGone() throws {
        let time = ManualClock()
        let live = try LiveApplication(clock: time.clock) { $0.apiToken = "backend-secret" }
        let (result, _, _) = try Self.demoPurchase(live)
        let code = String(try #require(result.text.firstMatch(of: /code=([a-z2-7]{32})/)?.1))
        time.advance(seconds: 86_400 + 1)
        let late = try Self.redeem(live, code)
        #expect(late.status == 410)
        #expect(late.text.contains("expired"))
    }

    @Test func theBackendHearsOfThePurchaseOnceAcrossFailuresAndARestart() throws {
        let receiver = try WebhookReceiver(secret: Self.secret, failFirst: 2)
        defer { receiver.stop() }
        let time = ManualClock()
        let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-hooks-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dataDir) }
        let configure: (inout Configuration) -> Void = {
            $0.webhooks.url = receiver.url
            $0.webhooks.secret = Self.secret
            $0.adminToken = "admin-secret"
        }
        do {
            // The first run: the purchase, and two failed tries. Leaving this scope stops linkout with the event
            // still undelivered.
            let first = try LiveApplication(dataDir: dataDir, clock: time.clock, configure: configure)
            _ = try Self.demoPurchase(first)
            // The first try fails at once; the retry is due after the backoff: move the clock instead of waiting,
            // once the failed try is recorded (its backoff counts from the clock then).
            try waitUntil { receiver.deliveries.count >= 1 }
            try waitUntil {
                let failing = try? first.get(
                    "/admin/webhooks?state=pending",
                    headers: ["Authorization": "Bearer admin-secret"]
                )
                return failing?.text.contains(#""lastStatus":500"#) == true
            }
            time.advance(seconds: 3600)
            try waitUntil { receiver.deliveries.count >= 2 }
        }
        time.advance(seconds: 3600)
        let second = try LiveApplication(dataDir: dataDir, clock: time.clock, configure: configure)
        #expect(receiver.waitForAccepted(1))
        let deliveries = receiver.deliveries
        #expect(deliveries.count == 3)
        #expect(Set(deliveries.map(\.eventId)).count == 1)
        #expect(Set(deliveries.map(\.body)).count == 1)
        #expect(deliveries.allSatisfy { $0.signatureValid })
        #expect(deliveries.map(\.answered) == [500, 500, 200])
        let last = try #require(deliveries.last)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(last.body)) as? [String: Any])
        #expect(event["type"] as? String == "purchase.completed")
        #expect(event["id"] as? String == deliveries.last?.eventId)
        #expect((event["purchase"] as? [String: Any])?["productId"] as? String == "pro.lifetime")
        // Delivered: nothing more goes out however long linkout runs.
        time.advance(seconds: 86_400)
        // The receiver has answered; the delivery is recorded just after.
        #expect(
            eventually(within: 30) {
                let delivered = try? second.get(
                    "/admin/webhooks?state=delivered",
                    headers: ["Authorization": "Bearer admin-secret"]
                )
                return delivered?.text.contains(deliveries[0].eventId) == true
            }
        )
        #expect(receiver.deliveries.count == 3)
    }

    /// An event given up after its tries says no retry is coming: its next attempt was shown ahead, as if one were.
    @Test func aGivenUpEventShowsNoRetryAhead() throws {
        let receiver = try WebhookReceiver(secret: Self.secret, failFirst: 100)
        defer { receiver.stop() }
        let time = ManualClock()
        let live = try LiveApplication(clock: time.clock) {
            $0.webhooks.url = receiver.url
            $0.webhooks.secret = Self.secret
            $0.webhooks.retryForSeconds = 60
            $0.adminToken = "admin-secret"
        }
        _ = try Self.demoPurchase(live)
        let admin = ["Authorization": "Bearer admin-secret"]
        for tries in 1...Int(WebhookSender.leastTries) {
            try waitUntil { receiver.deliveries.count >= tries }
            // Recorded just after the receiver answered: its backoff counts from the clock then.
            try waitUntil {
                let listed = try? live.get(
                    "/admin/webhooks?state=\(tries < WebhookSender.leastTries ? "pending" : "failed")",
                    headers: admin
                )
                return listed?.text.contains(#""attempts":\#(tries)"#) == true
            }
            time.advance(seconds: 3600)
        }
        let failed = try live.get("/admin/webhooks?state=failed", headers: admin)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(failed.body)) as? [String: Any])
        let delivery = try #require((object["webhooks"] as? [[String: Any]])?.first)
        let next = try #require(delivery["nextAttemptAt"] as? Int64)
        let last = try #require(delivery["lastAttemptAt"] as? Int64)
        #expect(next <= last, "\(delivery)")
    }

    /// A receiver shedding load with a 429 and `Retry-After` is tried again when it asked, not after the backoff's
    /// 5 s (a 503's is read the same way; what it asks is held to an hour).
    @Test func aReceiversRetryAfterIsHonoured() throws {
        let receiver = try WebhookReceiver(secret: Self.secret, failFirst: 1, failStatus: 429, retryAfter: "120")
        defer { receiver.stop() }
        let time = ManualClock()
        let live = try LiveApplication(clock: time.clock) {
            $0.webhooks.url = receiver.url
            $0.webhooks.secret = Self.secret
            $0.adminToken = "admin-secret"
        }
        _ = try Self.demoPurchase(live)
        let admin = ["Authorization": "Bearer admin-secret"]
        try waitUntil { receiver.deliveries.count >= 1 }
        var delivery: [String: Any] = [:]
        try waitUntil {
            guard let listed = try? live.get("/admin/webhooks?state=pending", headers: admin),
                let object = try? JSONSerialization.jsonObject(with: Data(listed.body)) as? [String: Any],
                let first = (object["webhooks"] as? [[String: Any]])?.first, first["attempts"] as? Int64 == 1
            else { return false }
            delivery = first
            return true
        }
        let next = try #require(delivery["nextAttemptAt"] as? Int64)
        let last = try #require(delivery["lastAttemptAt"] as? Int64)
        #expect(next - last == 120_000, "\(delivery)")
        // Not tried again before then, and delivered once it is time.
        time.advance(seconds: 60)
        #expect(!receiver.waitForAccepted(1, seconds: 1.5))
        time.advance(seconds: 61)
        #expect(receiver.waitForAccepted(1))
        #expect(receiver.deliveries.count == 2)
    }

    @Test func whatAReceiverAsksIsHeldToAnHour() {
        let now: Int64 = 1_780_000_000_000
        #expect(WebhookSender.retryAt(now, attempts: 0, retryAfter: nil) == now + 5_000)
        #expect(WebhookSender.retryAt(now, attempts: 0, retryAfter: "2") == now + 5_000)
        #expect(WebhookSender.retryAt(now, attempts: 0, retryAfter: "86400") == now + 3_600_000)
        #expect(WebhookSender.retryAt(now, attempts: 0, retryAfter: "soon") == now + 5_000)
        #expect(WebhookSender.retryAt(now, attempts: 0, retryAfter: "Thu, 28 May 2026 20:36:40 GMT") == now + 600_000)
    }

    /// One purchase's events wait for each other, not for another purchase's: while the receiver holds the first
    /// purchases' events, the next one's is delivered (one at a time for all, a hanging event cost every other
    /// customer its timeout, on every retry). Held as many as the deliveries in flight at once: a call that hangs
    /// gives its place to another sender, or four hanging purchases held up everyone else until their timeout.
    @Test func hangingDeliveriesHoldUpOnlyTheirOwnPurchases() throws {
        let held = WebhookSender.concurrency
        let receiver = try WebhookReceiver(secret: Self.secret, holdFirst: held)
        defer { receiver.stop() }
        let live = try LiveApplication {
            $0.webhooks.url = receiver.url
            $0.webhooks.secret = Self.secret
            $0.webhooks.timeoutSeconds = 30
        }
        for index in 0..<held {
            let target = PostgresClusterTests.landingTarget(externalPurchaseId: "held-\(index)")
            _ = try Self.demoPurchase(live, landingOn: target)
        }
        try waitUntil(seconds: 20) { receiver.holding == held }
        _ = try Self.demoPurchase(live, landingOn: PostgresClusterTests.landingTarget(externalPurchaseId: "next"))
        // Within the held calls' timeout (30 s): the next is not waiting for them.
        #expect(receiver.waitForAccepted(1, seconds: 25))
        #expect(receiver.holding == held)
        let next = try #require(receiver.deliveries.first { $0.answered == 200 })
        #expect(String(decoding: next.body, as: UTF8.self).contains("\"next\""))
        receiver.release()
        #expect(receiver.waitForAccepted(held + 1, seconds: 20))
        let accepted = receiver.deliveries.filter { $0.answered == 200 }
        #expect(Set(accepted.map(\.eventId)).count == held + 1)
    }

    @Test func purchasesAreRestoredByTheAppAccountTokenTheAppForwarded() throws {
        let live = try LiveApplication { $0.apiToken = "backend-secret" }
        let account = UUID().uuidString.lowercased()
        let token = TokenMinter.mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: true,
            tokenType: "SERVICES",
            nowMilliseconds: Clock.system.nowMilliseconds()
        )
        let forwarded = try live.post(
            "/v1/tokens",
            contentType: "application/json",
            body: #"{"token": "\#(TokenMinter.encode(token))", "appAccountToken": "\#(account)"}"#
        )
        #expect(forwarded.status == 201)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(forwarded.body)) as? [String: Any])
        let checkoutURL = try #require(object["checkoutURL"] as? String)
        let checkout = String(try #require(checkoutURL.firstMatch(of: /\/checkout\/[a-z2-7]+/)?.0))
        let page = try live.get(checkout)
        let cookie = try #require(page.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        let form = "application/x-www-form-urlencoded"
        let payment = try #require(
            try live.post(
                checkout,
                contentType: form,
                body: "csrf=\(csrf)&currency=EUR&product=pro.monthly",
                headers: ["Cookie": cookie]
            )
            .header("Location")
        )
        let demo = try live.get(payment, headers: ["Cookie": cookie])
        let demoCSRF = try #require(demo.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        #expect(
            try live.post(
                payment,
                contentType: form,
                body: "csrf=\(demoCSRF)&action=complete",
                headers: ["Cookie": cookie]
            )
            .status == 303
        )
        let auth = ["Authorization": "Bearer backend-secret"]
        let restored = try live.get("/v1/purchases?appAccountToken=\(account.uppercased())", headers: auth)
        #expect(restored.status == 200)
        #expect(restored.text.contains(#""appAccountToken":"\#(account)""#))
        #expect(restored.text.contains(#""productId":"pro.monthly""#))
        #expect(restored.text.contains(#""kind":"subscription""#))
        #expect(restored.text.contains(#""currentPeriodEnd":"#))
        #expect(
            try live.get("/v1/purchases?appAccountToken=\(UUID().uuidString)", headers: auth).text
                == #"{"purchases":[]}"#
        )
        #expect(try live.get("/v1/purchases", headers: auth).status == 400)
        #expect(try live.get("/v1/purchases?appAccountToken=\(account)").status == 401)
    }

    @Test func appSiteAssociationComesFromConfiguration() throws {
        let plain = try LiveApplication()
        #expect(try plain.get("/.well-known/apple-app-site-association").status == 404)
        let live = try LiveApplication {
            $0.apps[0].teamId = "ABCDE12345"
            $0.apps[0].universalLinkPaths = ["/open/*"]
        }
        let file = try live.get("/.well-known/apple-app-site-association")
        #expect(file.status == 200)
        #expect(file.header("Content-Type") == "application/json")
        #expect(
            file.text
                == #"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example"],"components":[{"/":"/open/*"}]}]}}"#
        )
    }

    private func waitUntil(seconds: Double = 10, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else {
                Issue.record("condition not met within \(seconds) s")
                return
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}
