import Foundation
import Lifecycle
import Storage
import Synchronization
import TestSupport
import Testing

@testable import LinkOut

/// The whole application against clients that misbehave: too many connections, guessed secrets, forged ids.
@Suite("LinkOut under abuse")
struct AbuseTests {
    @Test func theConfiguredPerClientConnectionCapSheds503() throws {
        let live = try LiveApplication { $0.server.maxConnectionsPerClient = 2 }
        let held = try (0..<2).map { _ in try live.client() }
        for client in held {
            #expect(try client.roundTrip("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        }
        let excess = try live.client()
        #expect(try excess.readResponse().status == 503)
        for client in held {
            #expect(try client.roundTrip("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        }
    }

    /// Every route's body limit holds when the head arrives: a client that sends only the head gets its answer
    /// (the JSON APIs in their own shape), so no body nobody takes is buffered. Before, each of these waited for
    /// its body (up to the server's megabyte) before the handler said no.
    @Test func routesRefuseBodiesTheyDoNotTakeBeforeTheBodyIsSent() throws {
        let live = try LiveApplication {
            $0.apiToken = "backend-secret"
            $0.adminToken = "admin-secret"
        }
        let cases: [(target: String, length: Int, status: Int, json: Bool)] = [
            ("POST /v1/tokens", TokenAPI.maxBodyBytes + 1, 413, true),
            ("POST /v1/redemptions", RedemptionBody.maxBodyBytes + 1, 413, true),
            ("POST /v1/tokens/SANDBOX_1/line-items", LineItemsAPI.maxBodyBytes + 1, 413, true),
            ("POST /admin/tokens/SANDBOX_1/line-items/li1/restate", LineItemsAPI.maxBodyBytes + 1, 413, true),
            ("POST /notifications/appstore", AppStoreNotificationRoute.maxBodyBytes + 1, 413, true),
            ("POST /checkout/abc", CheckoutRoute.maxFormBytes + 1, 413, false),
            ("POST /admin/login", DashboardRoute.maxFormBytes + 1, 413, false),
            ("GET /healthz", 1, 413, false),
            ("POST /healthz", 100, 405, false),
            ("PUT /v1/tokens", 100, 405, false),
        ]
        for test in cases {
            let client = try live.client()
            // The bearer routes check the credential as the head arrives too (`InputEdgeTests`): given here.
            let bearer = test.target.contains("/admin/") ? "admin-secret" : "backend-secret"
            let response = try client.roundTrip(
                "\(test.target) HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                    + "Authorization: Bearer \(bearer)\r\nContent-Length: \(test.length)\r\n\r\n"
            )
            #expect(response.status == test.status, "\(test.target)")
            #expect(response.header("Connection") == "close", "\(test.target)")
            if test.json { #expect(response.text.contains(#""code":"body_too_large""#), "\(test.target)") }
        }
        // Within its limit a route reads its body as before.
        let created = try live.post(
            "/v1/tokens",
            contentType: "application/json",
            body: #"{"token": "\#(String(repeating: "a", count: TokenAPI.maxBodyBytes - 20))"}"#
        )
        #expect(created.status == 400)
    }

    /// The server's own refusals on the JSON APIs' paths (no route, not this method, a body where none is taken)
    /// answer in the APIs' error shape; a page's path keeps the plain-text answer.
    @Test func refusalsOnTheAPIsPathsAnswerJSON() throws {
        let live = try LiveApplication { $0.adminToken = "admin-secret" }
        let cases: [(request: String, status: Int, code: String?)] = [
            ("PUT /v1/tokens", 405, "method_not_allowed"),
            ("GET /v1/no-such-route", 404, "not_found"),
            ("DELETE /admin/tokens", 405, "method_not_allowed"),
            ("GET /admin/no-such-route", 404, "not_found"),
            ("POST /admin/tokens/SANDBOX_1/resend", 413, "body_too_large"),
            ("GET /webhooks/stripe", 405, "method_not_allowed"),
            ("POST /webhooks/paypal", 404, "not_found"),
            // Apple's notification path, which the configuration names, answers its refusals in JSON too.
            ("GET /notifications/appstore", 405, "method_not_allowed"),
            ("PUT /checkout/abc", 405, nil),
            ("GET /no-such-page", 404, nil),
        ]
        for test in cases {
            let client = try live.client()
            let response = try client.roundTrip(
                "\(test.request) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer admin-secret\r\n"
                    + "Content-Length: 2\r\n\r\n{}"
            )
            #expect(response.status == test.status, "\(test.request)")
            if let code = test.code {
                #expect(response.header("Content-Type") == "application/json", "\(test.request)")
                #expect(response.text.contains(#""code":"\#(code)""#), "\(test.request): \(response.text)")
            } else {
                #expect(response.header("Content-Type")?.hasPrefix("text/plain") == true, "\(test.request)")
            }
            if test.status == 405 { #expect(response.header("Allow")?.isEmpty == false, "\(test.request)") }
            // A body of two bytes is not "too large": the route takes none, and says so.
            if test.status == 413 { #expect(response.text.contains("takes no body"), "\(response.text)") }
        }
        // Without an admin token the admin API's routes answer as a path with no route: a prober learns nothing.
        let closed = try LiveApplication { $0.adminToken = nil }
        let route = try closed.get("/admin/tokens")
        let none = try closed.get("/admin/no-such-route")
        #expect(route.status == 404 && route.text == none.text && route.header("Content-Type") == "application/json")
    }

    /// Ten refused bearer tokens from one client, then 429 for that client on the admin and line-item APIs,
    /// even with the right token; another client is not affected.
    @Test func failedBearerTokensAreThrottledPerClient() throws {
        let live = try LiveApplication {
            $0.adminToken = "admin-secret"
            $0.apiToken = "backend-secret"
            // Lets each test client name its own address.
            $0.server.trustedProxies = ["127.0.0.1"]
        }
        func admin(_ token: String, from client: String) throws -> RawClient.Response {
            try live.get("/admin/tokens", headers: ["Authorization": "Bearer \(token)", "X-Forwarded-For": client])
        }
        // Requests that present no token guess nothing, and are not counted: a browser sends them unasked for any
        // `<img>` a web page points at an admin URL, which locked the operator and the backend out.
        let browser = "203.0.113.6"
        for _ in 0..<20 {
            #expect(try live.get("/admin/tokens", headers: ["X-Forwarded-For": browser]).status == 401)
        }
        #expect(try admin("admin-secret", from: browser).status == 200)
        let guesser = "203.0.113.7"
        for attempt in 0..<10 {
            #expect(try admin("guess-\(attempt)", from: guesser).status == 401)
        }
        let blocked = try admin("guess-10", from: guesser)
        #expect(blocked.status == 429)
        let retryAfter = try #require(Int(blocked.header("Retry-After") ?? ""))
        #expect((1...60).contains(retryAfter))
        #expect(try admin("admin-secret", from: guesser).status == 429)
        let lineItems = try live.post(
            "/v1/tokens/e/line-items",
            contentType: "application/json",
            body: "{}",
            headers: ["Authorization": "Bearer backend-secret", "X-Forwarded-For": guesser]
        )
        #expect(lineItems.status == 429)
        #expect(try admin("admin-secret", from: "203.0.113.8").status == 200)

        // The line-item API counts its own refusals the same way.
        let other = "203.0.113.9"
        func post(_ token: String) throws -> RawClient.Response {
            try live.post(
                "/v1/tokens/e/line-items",
                contentType: "application/json",
                body: "{}",
                headers: ["Authorization": "Bearer \(token)", "X-Forwarded-For": other]
            )
        }
        for attempt in 0..<10 { #expect(try post("guess-\(attempt)").status == 401) }
        #expect(try post("guess-10").status == 429)
    }

    @Test func theFailedAuthWindowEndsAndASpreadOfFailuresIsNotBlocked() {
        let now = Mutex<Int64>(1_000_000)
        let throttle = FailedAuthThrottle(
            maxFailures: 3,
            window: .seconds(60),
            trustedProxies: [],
            clock: Clock { now.withLock { $0 } }
        )
        for _ in 0..<3 { throttle.recordFailure(for: "a") }
        #expect(throttle.retryAfter(for: "a") == 60)
        #expect(throttle.retryAfter(for: "b") == nil)
        now.withLock { $0 += 59_500 }
        #expect(throttle.retryAfter(for: "a") == 1)
        now.withLock { $0 += 500 }
        #expect(throttle.retryAfter(for: "a") == nil)
        // Two failures a window: never blocked.
        for _ in 0..<5 {
            throttle.recordFailure(for: "c")
            throttle.recordFailure(for: "c")
            #expect(throttle.retryAfter(for: "c") == nil)
            now.withLock { $0 += 60_000 }
        }
    }

    /// The window is a span on the monotonic clock: a wall clock stepped back an hour kept a blocked client (the
    /// right token too) out for the hour.
    @Test func theFailedAuthWindowIgnoresAWallClockSteppedBack() {
        let wall = Mutex<Int64>(1_780_000_000_000)
        let uptime = Mutex<UInt64>(5_000_000_000)
        let throttle = FailedAuthThrottle(
            maxFailures: 3,
            window: .seconds(60),
            trustedProxies: [],
            clock: Clock(
                milliseconds: { wall.withLock { $0 } },
                uptimeNanoseconds: { uptime.withLock { $0 } }
            )
        )
        for _ in 0..<3 { throttle.recordFailure(for: "a") }
        #expect(throttle.retryAfter(for: "a") == 60)
        wall.withLock { $0 -= 3_600_000 }
        #expect(throttle.retryAfter(for: "a") == 60)
        uptime.withLock { $0 += 60_000_000_000 }
        #expect(throttle.retryAfter(for: "a") == nil)
    }

    /// A session id the server never minted is replaced, not adopted: the page's CSRF token is bound to the new
    /// session, so a form posted under the made-up id is refused.
    @Test func sessionIdsTheServerNeverIssuedAreReplaced() throws {
        let live = try LiveApplication()
        let landing = try live.get(AppleVectors.documentedTarget)
        let location = try #require(landing.header("Location"))
        let minted = try #require(landing.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        #expect(try live.get(location, headers: ["Cookie": minted]).header("Set-Cookie") == nil)

        let madeUp = [String(repeating: "a", count: 26), String(repeating: "b", count: 52)]
        for id in madeUp {
            let cookie = "linkout_session=\(id)"
            let page = try live.get(location, headers: ["Cookie": cookie])
            let replacement = try #require(page.header("Set-Cookie"))
            #expect(replacement.hasPrefix("linkout_session="))
            #expect(!replacement.contains(id))
            let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
            let posted = try live.post(
                location,
                contentType: "application/x-www-form-urlencoded",
                body: "csrf=\(csrf)&currency=EUR&product=pro.lifetime",
                headers: ["Cookie": cookie]
            )
            #expect(posted.status == 403)
        }
        #expect(try live.ledger().tokens.count(.checkoutIntents) == 0)
    }

    @Test func httpsSessionsUseTheHostPrefix() throws {
        let live = try LiveApplication { $0.server.publicURL = "https://shop.example" }
        let landing = try live.get(AppleVectors.documentedTarget)
        let location = try #require(landing.header("Location"))
        let setCookie = try #require(landing.header("Set-Cookie"))
        #expect(setCookie.hasPrefix("__Host-linkout_session="))
        let attributes = setCookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(attributes.contains("Secure"))
        #expect(attributes.contains("Path=/"))
        #expect(!attributes.contains { $0.lowercased().hasPrefix("domain") })
        let cookie = try #require(attributes.first)
        let page = try live.get(location, headers: ["Cookie": cookie])
        #expect(page.header("Set-Cookie") == nil)
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        let posted = try live.post(
            location,
            contentType: "application/x-www-form-urlencoded",
            body: "csrf=\(csrf)&currency=EUR&product=pro.lifetime",
            headers: ["Cookie": cookie]
        )
        #expect(posted.status == 303)  // accepted: on to the payment
        // The same id without the prefix could have been planted by a subdomain: not accepted under https.
        let unprefixed = "linkout_session=" + cookie.dropFirst("__Host-linkout_session=".count)
        #expect(try live.get(location, headers: ["Cookie": unprefixed]).header("Set-Cookie") != nil)
    }

    /// `/metrics` reads the outbox summary from SQLite, so it must not run on an event loop: while a scrape is
    /// held inside its gauges, every new connection is still served. (Were the scrape on a loop, the kernel would
    /// put some of these connections on that loop, and they would wait.)
    @Test func aSlowMetricsScrapeHoldsNoEventLoop() throws {
        let live = try LiveApplication()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        live.application.metrics.addGauges {
            entered.signal()
            // Bounded, so a failing test never holds a thread for good.
            _ = release.wait(timeout: .now() + 10)
            return []
        }
        let scrape = try live.client()
        scrape.send("GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(entered.wait(timeout: .now() + 10) == .success)
        var served = 0
        for _ in 0..<32 {
            let client = try RawClient(port: live.port, timeout: 2)
            if (try? client.roundTrip("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status) == 200 { served += 1 }
        }
        release.signal()
        #expect(served == 32)
        #expect(try scrape.readResponse().status == 200)
    }
}
