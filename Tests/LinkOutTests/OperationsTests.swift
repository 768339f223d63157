import Crypto
import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// What operators rely on: request ids and access lines, readiness, rate limits, the admin API, metrics.
@Suite("Operations")
struct OperationsTests {
    @Test func everyResponseCarriesARequestIdAndAnAccessLine() throws {
        let live = try LiveApplication()
        let response = try live.get("/healthz")
        let id = try #require(response.header("X-Request-Id"))
        #expect(!id.isEmpty)
        // A client that is no trusted proxy does not name its request: it could copy another's id, or a token's,
        // into the log and the support reference.
        let untrusted = try live.get("/healthz", headers: ["X-Request-Id": "edge-1234"])
        #expect(untrusted.header("X-Request-Id") != "edge-1234")
        let behindProxy = try LiveApplication { $0.server.trustedProxies = ["127.0.0.1"] }
        let offered = try behindProxy.get("/healthz", headers: ["X-Request-Id": "edge-1234"])
        #expect(offered.header("X-Request-Id") == "edge-1234")
        let forged = try behindProxy.get("/healthz", headers: ["X-Request-Id": "bad id with spaces"])
        #expect(forged.header("X-Request-Id") != "bad id with spaces")
        _ = try live.get(AppleVectors.documentedTarget)
        let lines = live.logLines.all.filter { $0.contains("\"message\":\"request\"") }
        #expect(lines.contains { $0.contains("\"request.id\":\"\(id)\"") && $0.contains("\"route\":\"healthz\"") })
        #expect(lines.contains { $0.contains("\"route\":\"landing\"") && $0.contains("\"status\":\"303\"") })
        #expect(!lines.contains { $0.contains("externalPurchaseToken") })
        for line in live.logLines.all {
            #expect(
                (try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any],
                "not one JSON object: \(line)"
            )
        }
    }

    @Test func readinessFailsWhileTheLedgerRefusesWritesAndRecovers() throws {
        let live = try LiveApplication()
        #expect(try live.get("/readyz").status == 200)
        try live.ledger().suspendWrites(true)
        let down = try live.get("/readyz")
        #expect(down.status == 503)
        #expect(down.text.contains("database: not writable"))
        try live.ledger().suspendWrites(false)
        let up = try live.get("/readyz")
        #expect(up.status == 200)
        #expect(up.text.contains("database: writable"))
    }

    @Test func clientsOverTheirBudgetGet429WithRetryAfter() throws {
        let live = try LiveApplication {
            $0.server.rateLimitPerSecond = 1
            $0.server.rateLimitBurst = 2
        }
        #expect(try live.get("/?bundleId=com.example").status == 303)
        #expect(try live.get("/?bundleId=com.example").status == 303)
        let limited = try live.get("/?bundleId=com.example")
        #expect(limited.status == 429)
        #expect(Int(limited.header("Retry-After") ?? "") ?? 0 >= 1)
        #expect(limited.header("Content-Type") == "text/html; charset=utf-8")
        let api = try live.post("/v1/tokens", contentType: "application/json", body: #"{"token":"x"}"#)
        #expect(api.status == 429)
        #expect(api.text.contains("rate_limited"))
        // Without a trusted proxy, X-Forwarded-For changes nothing.
        #expect(try live.get("/?bundleId=com.example", headers: ["X-Forwarded-For": "203.0.113.9"]).status == 429)
        #expect(try live.get("/healthz").status == 200)  // only landing and API routes are limited
    }

    @Test func forwardedForCountsOnlyBehindATrustedProxy() throws {
        let live = try LiveApplication {
            $0.server.rateLimitPerSecond = 1
            $0.server.rateLimitBurst = 1
            $0.server.trustedProxies = ["127.0.0.1"]
        }
        #expect(try live.get("/?bundleId=com.example", headers: ["X-Forwarded-For": "203.0.113.1"]).status == 303)
        #expect(try live.get("/?bundleId=com.example", headers: ["X-Forwarded-For": "203.0.113.1"]).status == 429)
        // A different client behind the same proxy has its own budget; a forged left-most hop does not help.
        #expect(try live.get("/?bundleId=com.example", headers: ["X-Forwarded-For": "203.0.113.2"]).status == 303)
        #expect(
            try live.get("/?bundleId=com.example", headers: ["X-Forwarded-For": "198.51.100.7, 203.0.113.2"]).status
                == 429
        )
        // Nor does a line of the client's own before the proxy's: the lines are one list.
        let twoLines = try RawClient(port: live.port).roundTrip(
            "GET /?bundleId=com.example HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: 198.51.100.8\r\n"
                + "X-Forwarded-For: 203.0.113.2\r\n\r\n"
        )
        #expect(twoLines.status == 429)
        // A hop with the port a proxy added is its address.
        #expect(ClientAddress.address(in: "203.0.113.5:41234") == "203.0.113.5")
        #expect(ClientAddress.address(in: "[2001:db8::1]:443") == "2001:db8::1")
        #expect(ClientAddress.address(in: "fe80::1%eth0") == "fe80::1")
        #expect(ClientAddress.address(in: "2001:db8::7") == "2001:db8::7")
        #expect(ClientAddress.address(in: "not-an-address") == nil)
        // A hop that is no address is no client of its own.
        #expect(try live.get("/?bundleId=com.example", headers: ["X-Forwarded-For": "not-an-address"]).status == 303)
        #expect(try live.get("/?bundleId=com.example", headers: ["X-Forwarded-For": "still-not-one"]).status == 429)
    }

    @Test func theAdminAPINeedsItsTokenAndListsSearchesAndExports() throws {
        let live = try LiveApplication { $0.adminToken = "admin-secret" }
        for token in [AppleVectors.v1, AppleVectors.v3] {
            _ = try live.get(
                "/?externalPurchaseToken=\(token.replacingOccurrences(of: "=", with: "%3D"))&bundleId=com.example&utm_source=mail"
            )
        }
        #expect(try live.get("/admin/tokens").status == 401)
        #expect(try live.get("/admin/tokens", headers: ["Authorization": "Bearer wrong"]).status == 401)
        let auth = ["Authorization": "Bearer admin-secret"]
        let page = try live.get("/admin/tokens?limit=1", headers: auth)
        #expect(page.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(page.body)) as? [String: Any])
        #expect((object["tokens"] as? [Any])?.count == 1)
        #expect(object["nextOffset"] as? Int == 1)
        // The next page by key: it starts after the last token of this one, and says where the one after starts.
        let first = try #require((object["tokens"] as? [[String: Any]])?.first?["externalPurchaseId"] as? String)
        let after = try #require(object["nextAfter"] as? String)
        #expect(after.hasSuffix(":" + first))
        let next = try live.get(
            "/admin/tokens?limit=1&after=" + (after.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
            headers: auth
        )
        let nextObject = try #require(try JSONSerialization.jsonObject(with: Data(next.body)) as? [String: Any])
        let second = (nextObject["tokens"] as? [[String: Any]])?.first?["externalPurchaseId"] as? String
        #expect(second != nil && second != first)
        let last = try live.get(
            "/admin/tokens?limit=1&after=" + (nextObject["nextAfter"] as? String ?? ""),
            headers: auth
        )
        #expect(last.text.contains("\"tokens\":[]"))
        #expect(!last.text.contains("nextAfter"))
        #expect(try live.get("/admin/tokens?after=abc", headers: auth).status == 400)
        let search = try live.get("/admin/tokens?q=SANDBOX", headers: auth)
        #expect(search.text.contains("SANDBOX_00000000"))
        #expect(!search.text.contains("\"externalPurchaseId\":\"00000000"))
        let detail = try live.get("/admin/tokens/00000000-0000-0000-0000-000000000000", headers: auth)
        #expect(detail.status == 200)
        #expect(detail.text.contains("\"utm_source\":\"mail\""))
        #expect(detail.text.contains("\"visits\""))
        let csv = try live.get("/admin/tokens.csv", headers: auth)
        #expect(csv.header("Content-Type") == "text/csv; charset=utf-8")
        #expect(csv.text.hasPrefix("externalPurchaseId,environment"))
        #expect(csv.text.contains("SANDBOX_00000000-0000-0000-0000-000000000000,sandbox"))
        #expect(!csv.text.contains(AppleVectors.v1))
        #expect(csv.header("Link") == nil, "the whole ledger fits in one export")

        // Page by page, the rows are the same: a limit stops with the cursor of the rest.
        let ledger = live.ledger()
        let whole = csv.text.split(separator: "\r\n").dropFirst().map(String.init)
        #expect(whole.count >= 2)
        var firstRow = ""
        let rest = try #require(try LedgerCSV.export(ledger, limit: 1, pageSize: 1) { firstRow += $0 })
        var restRows = ""
        #expect(try LedgerCSV.export(ledger, after: rest, pageSize: 1) { restRows += $0 } == nil)
        #expect((firstRow + restRows).split(separator: "\r\n").map(String.init) == whole)
        #expect(try LedgerCSV.export(ledger, limit: whole.count) { _ in } == nil, "nothing after the last")
        let cursor = rest.text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let later = try live.get("/admin/tokens.csv?after=" + cursor, headers: auth)
        #expect(later.text == LedgerCSV.headerLine + restRows)
        #expect(try live.get("/admin/tokens.csv?after=abc", headers: auth).status == 400)
    }

    @Test func metricsNameEverySeriesOperatorsWatch() throws {
        let live = try LiveApplication()
        _ = try live.get(AppleVectors.documentedTarget)
        _ = try live.get("/?externalPurchaseToken=!!&bundleId=com.example")
        _ = live.ledger()  // tokens are counted as they reach the ledger's tables
        let text = try live.get("/metrics").text
        for series in [
            "linkout_http_requests_total{route=\"landing\",status=\"303\"} 1",
            "linkout_http_request_duration_seconds_bucket{le=\"+Inf\"}",
            "linkout_connections_open",
            "linkout_tokens_recorded_total{environment=\"production\",source=\"url\"} 1",
            "linkout_tokens_rejected_total{reason=\"not_base64\"} 1",
            "linkout_reports_pending", "linkout_oldest_unreported_token_age_seconds", "linkout_reporting_running 0",
        ] {
            #expect(text.contains(series), "missing \(series)")
        }
        // Every `_total` is typed a counter, also those read at the scrape (promtool and `rate()` want it).
        for name in ["linkout_connections_shed_total", "linkout_ledger_transactions_total"] {
            #expect(text.contains("# TYPE \(name) counter\n"), "\(name)")
        }
        #expect(text.contains("# TYPE linkout_connections_open gauge\n"))
    }

    /// A whole flow with every secret configured; nothing secret may reach the log.
    @Test func noTokenOrSecretIsEverLogged() throws {
        let key = try ES256Key.generate()
        let apple = try FakeAppleServer(publicKey: try ES256Key(pem: try key.publicKeyPEM()))
        defer { apple.stop() }
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-leak-\(UUID()).p8")
        let pem = try key.privateKeyPEM()
        try Data(pem.utf8).write(to: keyFile)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        let stripe = try FakeStripeServer()
        defer { stripe.stop() }
        let webhookSecret = "whsec_leak_test_secret_value"
        let live = try LiveApplication {
            $0.payments.provider = .stripe
            $0.payments[.stripe, "secretKey"] = stripe.secretKey
            $0.payments[.stripe, "webhookSecret"] = webhookSecret
            $0.payments[.stripe, "apiBase"] = stripe.apiBase
            $0.adminToken = "admin-secret-value"
            $0.apiToken = "api-secret-value"
            $0.apple.issuerId = "issuer-id"
            $0.apple.keyId = "KEYID12345"
            $0.apple.privateKeyFile = keyFile.path
            $0.apple.productionURL = apple.baseURL
            $0.apple.sandboxURL = apple.baseURL
            $0.reporting.noLineItemAfterSeconds = 0
        }
        let landing = try live.get(AppleVectors.documentedTarget)
        let cookie = landing.header("Set-Cookie")?.split(separator: ";").first.map(String.init) ?? ""
        let page = try live.get(landing.header("Location") ?? "/", headers: ["Cookie": cookie])
        let csrf = page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1 ?? ""
        // Stripe refuses once, echoing the key in its error text (as it does for a wrong key), then creates a session.
        stripe.enqueue(
            .respond(
                status: 401,
                body:
                    #"{"error":{"type":"invalid_request_error","message":"Invalid API Key provided: \#(stripe.secretKey)"}}"#
            )
        )
        for _ in 0..<2 {
            _ = try live.post(
                landing.header("Location") ?? "/",
                contentType: "application/x-www-form-urlencoded",
                body: "csrf=\(csrf)&currency=EUR&product=pro.lifetime",
                headers: ["Cookie": cookie]
            )
        }
        #expect(stripe.sessionsCreated == 1)
        let event =
            #"{"id":"evt_leak","object":"event","type":"checkout.session.expired","created":1,"livemode":false,"data":{"object":{"id":"cs_test_fake1","object":"checkout.session"}}}"#
        for secret in [webhookSecret, "whsec_wrong"] {
            let delivery = FakeStripeServer.signedDelivery(
                event: event,
                secret: secret,
                timestamp: Clock.system.nowSeconds()
            )
            _ = try live.post(
                "/webhooks/stripe",
                contentType: "application/json",
                body: event,
                headers: ["Stripe-Signature": delivery.header]
            )
        }
        _ = try live.get("/?externalPurchaseToken=\(AppleVectors.v1)&bundleId=com.other")
        _ = try live.post("/v1/tokens", contentType: "application/json", body: #"{"token": "\#(AppleVectors.v3)"}"#)
        _ = try live.get("/admin/tokens", headers: ["Authorization": "Bearer admin-secret-value"])
        _ = try live.get("/admin/tokens", headers: ["Authorization": "Bearer a-wrong-guess"])
        apple.enqueue(.respond(status: 500))
        live.application.reporting.tick()
        live.application.reporting.tick(now: Clock.system.nowMilliseconds() + 3_600_000)
        #expect(apple.received.count >= 1)  // at least one signed call to Apple happened during the flow
        let log = live.logLines.all.joined(separator: "\n")
        #expect(log.contains("report"))
        let pemBody = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        var secrets = [
            AppleVectors.v1, AppleVectors.v3, "admin-secret-value", "api-secret-value", "a-wrong-guess",
            stripe.secretKey, webhookSecret,
            String(landing.header("Location")?.dropFirst(10) ?? "checkout-id"),
        ]
        secrets += pemBody.map(String.init)
        secrets += apple.received.map(\.authorization)
        for secret in secrets where !secret.isEmpty {
            #expect(!log.contains(secret), "the log contains a secret: \(secret.prefix(12))…")
        }
    }
}
