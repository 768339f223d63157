import Domain
import Foundation
import Lifecycle
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// The operator dashboard over real HTTP: the login form, its session cookie, CSRF, the throttle, and what the
/// signed-in pages show.
@Suite("Dashboard")
struct DashboardTests {
    static let adminToken = "admin-secret-\(UUID().uuidString)"

    static func live(https: Bool = false) throws -> LiveApplication {
        try LiveApplication {
            $0.adminToken = adminToken
            if https { $0.server.publicURL = "https://pay.example.com" }
        }
    }

    /// `name=value` of a Set-Cookie header.
    /// The `Set-Cookie` header of the cookie `name`, among a response's.
    static func setCookie(_ response: RawClient.Response, _ name: String) -> String? {
        response.headers.first { $0.name.lowercased() == "set-cookie" && $0.value.hasPrefix(name + "=") }?.value
    }

    static func cookiePair(_ setCookie: String?) -> String {
        String(setCookie?.split(separator: ";").first ?? "")
    }

    static func csrf(in page: String) -> String? {
        guard let start = page.range(of: "name=\"csrf\" value=\"") else { return nil }
        return String(page[start.upperBound...].prefix { $0 != "\"" })
    }

    /// The login form's pre-login cookie and CSRF token.
    static func loginForm(_ live: LiveApplication) throws -> (cookie: String, csrf: String) {
        let page = try live.get("/admin")
        #expect(page.status == 200)
        return (cookiePair(setCookie(page, "linkout_admin_login")), try #require(csrf(in: page.text)))
    }

    static func form(_ fields: [(String, String)]) -> String {
        fields.map { name, value in
            name + "=" + (value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        }.joined(separator: "&")
    }

    static func postLogin(_ live: LiveApplication, cookie: String, csrf: String, token: String) throws
        -> RawClient.Response
    {
        try live.post(
            "/admin/login",
            contentType: "application/x-www-form-urlencoded",
            body: form([("csrf", csrf), ("token", token)]),
            headers: ["Cookie": cookie]
        )
    }

    /// Signs in and returns the session cookie (`name=value`).
    static func signIn(_ live: LiveApplication) throws -> String {
        let login = try loginForm(live)
        let response = try postLogin(live, cookie: login.cookie, csrf: login.csrf, token: adminToken)
        #expect(response.status == 303)
        return cookiePair(setCookie(response, "linkout_admin"))
    }

    @Test func theDashboardIsOffWithoutAnAdminToken() throws {
        let live = try LiveApplication()
        #expect(try live.get("/admin").status == 404)
        #expect(try live.post("/admin/login", contentType: "application/x-www-form-urlencoded", body: "").status == 404)
    }

    @Test func aWrongTokenGets401UntilTheThrottleAnswers429EvenToTheRightOne() throws {
        let live = try Self.live()
        let login = try Self.loginForm(live)
        for attempt in 1...10 {
            let response = try Self.postLogin(live, cookie: login.cookie, csrf: login.csrf, token: "guess-\(attempt)")
            #expect(response.status == 401)
            #expect(response.text.contains("That is not the admin token."))
            #expect(!response.text.contains("guess-\(attempt)"))
            #expect(response.header("set-cookie") == nil)
        }
        let blocked = try Self.postLogin(live, cookie: login.cookie, csrf: login.csrf, token: Self.adminToken)
        #expect(blocked.status == 429)
        #expect(Int(blocked.header("retry-after") ?? "") ?? 0 >= 1)
        #expect(blocked.text.contains("Too many refused tokens"))
        #expect(blocked.header("set-cookie") == nil)
    }

    @Test func theRightTokenGives303AndAStrictHttpOnlyCookieForAdminOnly() throws {
        let live = try Self.live()
        let login = try Self.loginForm(live)
        #expect(login.cookie.hasPrefix("linkout_admin_login="))
        let response = try Self.postLogin(live, cookie: login.cookie, csrf: login.csrf, token: Self.adminToken)
        #expect(response.status == 303)
        #expect(response.header("location") == "/admin")
        let setCookie = try #require(Self.setCookie(response, "linkout_admin"))
        let attributes = Set(
            setCookie.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }
        )
        #expect(attributes == ["Path=/admin", "Max-Age=28800", "HttpOnly", "SameSite=Strict"])
        let session = Self.cookiePair(setCookie)
        // A fresh id, not the one the browser held before signing in.
        #expect(session.dropFirst("linkout_admin=".count) != login.cookie.dropFirst("linkout_admin_login=".count))
        // The login form's cookie is spent.
        #expect(Self.setCookie(response, "linkout_admin_login")?.contains("Max-Age=0") == true)
        let dashboard = try live.get("/admin", headers: ["Cookie": session])
        #expect(dashboard.status == 200)
        #expect(dashboard.text.contains("action=\"/admin/logout\""))
        #expect(dashboard.header("content-security-policy")?.contains("script-src") == false)
        // The pre-login cookie alone is not signed in.
        #expect(!(try live.get("/admin", headers: ["Cookie": login.cookie]).text.contains("/admin/logout")))
        // The admin token reaches no log line.
        #expect(!live.logLines.all.contains { $0.contains(Self.adminToken) })
    }

    @Test func showingTheLoginFormNeverOverwritesASession() throws {
        let live = try Self.live()
        let session = try Self.signIn(live)
        // A signed-in operator arriving from another site sends no cookie (SameSite=Strict) and gets the form.
        let form = try live.get("/admin")
        #expect(form.text.contains("action=\"/admin/login\""))
        #expect(Self.setCookie(form, "linkout_admin") == nil)
        #expect(Self.setCookie(form, "linkout_admin_login") != nil)
        #expect(try live.get("/admin", headers: ["Cookie": session]).text.contains("/admin/logout"))
    }

    @Test func underHttpsTheCookieIsSecureAndPrefixed() throws {
        let live = try Self.live(https: true)
        let page = try live.get("/admin")
        #expect(Self.setCookie(page, "linkout_admin_login") == nil)
        let loginCookie = try #require(Self.setCookie(page, "__Secure-linkout_admin_login"))
        #expect(loginCookie.hasSuffix("; Secure"))
        let csrf = try #require(Self.csrf(in: page.text))
        let response = try Self.postLogin(
            live,
            cookie: Self.cookiePair(loginCookie),
            csrf: csrf,
            token: Self.adminToken
        )
        #expect(response.status == 303)
        let setCookie = try #require(Self.setCookie(response, "__Secure-linkout_admin"))
        #expect(setCookie.hasSuffix("; Secure"))
        // A cookie under the plain name is not the operator's session on an https installation.
        let plain = Self.cookiePair(setCookie).replacingOccurrences(of: "__Secure-", with: "")
        #expect(!(try live.get("/admin", headers: ["Cookie": plain]).text.contains("/admin/logout")))
    }

    @Test func formsWithoutTheRightCSRFTokenAreRefused() throws {
        let live = try Self.live()
        let login = try Self.loginForm(live)
        // The right token with a wrong CSRF token, or with none, or without the cookie it is bound to.
        for (cookie, csrf) in [(login.cookie, "forged"), (login.cookie, ""), ("", login.csrf)] {
            let response = try Self.postLogin(live, cookie: cookie, csrf: csrf, token: Self.adminToken)
            #expect(response.status == 403)
            #expect(Self.setCookie(response, "linkout_admin") == nil)
        }
        // Another browser's form does not fit this browser's cookie.
        let other = try Self.loginForm(live)
        #expect(try Self.postLogin(live, cookie: login.cookie, csrf: other.csrf, token: Self.adminToken).status == 403)
        let session = try Self.signIn(live)
        let logout = try live.post(
            "/admin/logout",
            contentType: "application/x-www-form-urlencoded",
            body: "csrf=\(login.csrf)",
            headers: ["Cookie": session]
        )
        #expect(logout.status == 403)
        #expect(try live.get("/admin", headers: ["Cookie": session]).text.contains("/admin/logout"))
    }

    @Test func signingOutEndsTheSession() throws {
        let live = try Self.live()
        let session = try Self.signIn(live)
        let page = try live.get("/admin", headers: ["Cookie": session])
        let csrf = try #require(Self.csrf(in: page.text))
        let logout = try live.post(
            "/admin/logout",
            contentType: "application/x-www-form-urlencoded",
            body: "csrf=\(csrf)",
            headers: ["Cookie": session]
        )
        #expect(logout.status == 303)
        #expect(Self.setCookie(logout, "linkout_admin")?.contains("Max-Age=0") == true)
        // On record, as the sign-in is, by the admin token's fingerprint.
        let signOut = try #require(try live.ledger().audit.entries(limit: 10).first)
        #expect(signOut.action == "dashboard.sign_out" && signOut.after == "signed out")
        #expect(signOut.actor == "admin:" + (try AuditFingerprint(ledger: live.ledger()))(Self.adminToken))
        // The old cookie, replayed, is signed out.
        let after = try live.get("/admin", headers: ["Cookie": session])
        #expect(after.text.contains("action=\"/admin/login\""))
        #expect(try live.get("/admin/find", headers: ["Cookie": session]).status == 401)
        #expect(try live.get("/admin/chart.svg", headers: ["Cookie": session]).status == 401)
    }

    /// Sessions live in the ledger: a second instance on the same database (on SQLite: the same data folder
    /// after a restart) knows a session the first started, and signing out on one ends it for both.
    @Test func aSessionHoldsOnAnotherInstanceAndAcrossARestart() throws {
        let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-admin-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dataDir) }
        let configure: (inout Configuration) -> Void = { $0.adminToken = Self.adminToken }
        var session = ""
        do {
            let first = try LiveApplication(dataDir: dataDir, configure: configure)
            session = try Self.signIn(first)
            // Two instances side by side, as behind a balancer.
            if TestDatabase.postgresURL != nil {
                let second = try LiveApplication(dataDir: dataDir, configure: configure)
                let page = try second.get("/admin", headers: ["Cookie": session])
                #expect(page.text.contains("/admin/logout"))
                let csrf = try #require(Self.csrf(in: page.text))
                let logout = try second.post(
                    "/admin/logout",
                    contentType: "application/x-www-form-urlencoded",
                    body: "csrf=\(csrf)",
                    headers: ["Cookie": session]
                )
                #expect(logout.status == 303)
                #expect(!(try first.get("/admin", headers: ["Cookie": session]).text.contains("/admin/logout")))
                session = try Self.signIn(first)
            }
        }
        let restarted = try LiveApplication(dataDir: dataDir, configure: configure)
        #expect(try restarted.get("/admin", headers: ["Cookie": session]).text.contains("/admin/logout"))
        #expect(try restarted.get("/admin/chart.svg", headers: ["Cookie": session]).status == 200)
    }

    /// Replacing the admin token (it leaked) ends the sessions signed in with the old one: they held for up to
    /// eight hours after the rotation, and only SQL could end them.
    @Test func replacingTheAdminTokenEndsTheSessionsSignedInWithTheOldOne() throws {
        let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-admin-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dataDir) }
        var session = ""
        do {
            let first = try LiveApplication(dataDir: dataDir) { $0.adminToken = Self.adminToken }
            session = try Self.signIn(first)
            #expect(try first.get("/admin", headers: ["Cookie": session]).text.contains("/admin/logout"))
        }
        do {
            let rotated = try LiveApplication(dataDir: dataDir) { $0.adminToken = "rotated-" + Self.adminToken }
            let page = try rotated.get("/admin", headers: ["Cookie": session])
            #expect(page.status == 200)
            #expect(!page.text.contains("/admin/logout"))
            #expect(try rotated.get("/admin/chart.svg", headers: ["Cookie": session]).status == 401)
        }
        // The old token put back (a rollback of the secret, an old container): its sessions stay ended. They only
        // stopped matching while the other token was in force, and came back with the old one.
        let back = try LiveApplication(dataDir: dataDir) { $0.adminToken = Self.adminToken }
        #expect(try back.get("/admin/chart.svg", headers: ["Cookie": session]).status == 401)
    }

    /// A session cookie planted for a longer path comes first in the Cookie header: the operator's own, after
    /// it, is still read, where every page showed the login form.
    @Test func aPlantedSessionCookieBeforeTheOperatorsIsPassedOver() throws {
        let live = try LiveApplication { $0.adminToken = Self.adminToken }
        let session = try Self.signIn(live)
        let planted = try Self.loginForm(live).cookie.replacingOccurrences(
            of: "linkout_admin_login=",
            with: "linkout_admin="
        )
        #expect(planted.hasPrefix("linkout_admin="))
        let page = try live.get("/admin/chart.svg", headers: ["Cookie": planted + "; " + session])
        #expect(page.status == 200)
    }

    @Test func aSessionExpiresAfterItsLifetime() throws {
        let clock = ManualClock()
        let live = try LiveApplication(clock: clock.clock) { $0.adminToken = Self.adminToken }
        let session = try Self.signIn(live)
        clock.advance(seconds: AdminSessions.lifetimeSeconds - 60)
        #expect(try live.get("/admin", headers: ["Cookie": session]).text.contains("/admin/logout"))
        clock.advance(seconds: 120)
        #expect(!(try live.get("/admin", headers: ["Cookie": session]).text.contains("/admin/logout")))
    }

    @Test func theDashboardShowsChartFunnelReportStatesAndTheOldestUnreportedAge() throws {
        // The reporting thread must not queue its own report for "stale" (eleven days quiet) before the test does.
        let live = try LiveApplication {
            $0.adminToken = Self.adminToken
            $0.reporting.noLineItemAfterSeconds = 40 * 86_400
        }
        let ledger = live.ledger()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let day = Milliseconds.day
        try live.recordAppToken("fresh", now: now)
        try live.recordAppToken("chosen", now: now)
        // Created eleven days ago and never reported: past Apple's ten-day notice.
        try live.recordAppToken("stale", now: now - 11 * day)
        _ = try ledger.tokens.recordCheckoutIntent(
            checkoutId: "c-chosen",
            productId: "pro.lifetime",
            currency: "EUR",
            amount: "29.99",
            at: now
        )
        try ledger.reports.enqueueReport(
            StoredReport(
                requestIdentifier: "req-stale",
                externalPurchaseId: "stale",
                environment: .production,
                bundleId: "com.example",
                status: .noLineItem,
                body: "{}",
                nextAttemptAt: 0,
                createdAt: now
            ),
            lineItemRows: []
        )
        try ledger.reports.recordAttempt(
            "req-stale",
            ReportAttempt(
                state: .rejected,
                httpStatus: 400,
                response: "{\"errorMessage\":\"<b>bad</b>\"}",
                nextAttemptAt: 0,
                at: now
            )
        )
        let session = try Self.signIn(live)
        let page = try live.get("/admin", headers: ["Cookie": session]).text
        #expect(page.contains("<img src=\"/admin/chart.svg\""))
        #expect(page.contains("/admin/chart.svg?theme=dark"))
        for (step, count) in [("Landing", 3), ("Checkout", 1), ("Payment", 0), ("Reported", 0)] {
            #expect(page.contains("<span class=\"step\">\(step) ("), "funnel step \(step)")
            #expect(
                page.range(
                    of: "\(step) ([^<]*)</span> <strong class=\"count\">\(count)</strong>",
                    options: .regularExpression
                )
                    != nil,
                "funnel \(step) = \(count)"
            )
        }
        #expect(page.contains("<dt>rejected</dt><dd>1</dd>"))
        #expect(page.contains("<dt>pending</dt><dd>0</dd>"))
        #expect(page.contains("Oldest unreported token: created 11 d 0 h ago"))
        #expect(page.contains("Past Apple&#39;s notice by 1 d 0 h"))
        #expect(page.contains("class=\"late\""))
        // Apple's answer is shown as text, never as markup.
        #expect(page.contains("HTTP 400: {&quot;errorMessage&quot;:&quot;&lt;b&gt;bad&lt;/b&gt;&quot;}"))
        #expect(!page.contains("<b>bad</b>"))
        // The rejected token needs attention: what was rejected, the time past Apple's notice, and the fix.
        #expect(page.contains("1 token(s) need you"))
        #expect(page.contains("<td>report NO_LINE_ITEM rejected</td>"))
        #expect(page.contains("past by 1 d 0 h"))
        #expect(page.contains("<code>linkout report no-line-item stale, or, once the cause is fixed"))
        let chart = try live.get("/admin/chart.svg", headers: ["Cookie": session])
        #expect(chart.status == 200)
        #expect(chart.header("content-type") == "image/svg+xml; charset=utf-8")
        // Eleven days ago is inside the chart's 30 days: all three tokens count.
        #expect(chart.text.contains("<title>Tokens first seen per day, last 30 days: 3 in total</title>"))
        #expect(chart.text.contains("fill=\"#0f7a5c\""))
        let dark = try live.get("/admin/chart.svg?theme=dark", headers: ["Cookie": session])
        #expect(dark.text.contains("fill=\"#5fd0a8\"") && !dark.text.contains("fill=\"#0f7a5c\""))
    }

    @Test func aFailingWebhookShowsWithItsReason() throws {
        let receiver = try WebhookReceiver(secret: EntitlementTests.secret, failFirst: 100)
        defer { receiver.stop() }
        let live = try LiveApplication {
            $0.adminToken = Self.adminToken
            $0.webhooks.url = receiver.url
            $0.webhooks.secret = EntitlementTests.secret
        }
        _ = try EntitlementTests.demoPurchase(live)
        #expect(eventually(within: 30) { receiver.deliveries.count >= 1 })
        let session = try Self.signIn(live)
        // The attempt is recorded just after the receiver answers: look until the page shows it.
        var page = ""
        #expect(
            eventually(within: 30) {
                page = (try? live.get("/admin", headers: ["Cookie": session]).text) ?? ""
                return page.contains("HTTP 500")
            }
        )
        #expect(page.contains("<dt>pending</dt><dd>1</dd>"))
        // One try so far, or two if the five-second retry came before the page was read on a slow machine.
        #expect(
            page.range(of: "<td>purchase.completed</td><td>pending</td><td>[12]</td>", options: .regularExpression)
                != nil
        )
        #expect(!page.contains("No failing webhook deliveries."))
    }

    @Test func theTokenListSearchesByPrefixAndEscapesWhatOutsidersSent() throws {
        let live = try Self.live()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for id in ["PROD_1", "PROD_2", "OTHER_1", "<script>alert(1)</script>"] {
            try live.recordAppToken(id, now: now)
        }
        let session = try Self.signIn(live)
        let found = try live.get("/admin/find?q=PROD_", headers: ["Cookie": session])
        #expect(found.status == 200)
        // What the page never links is refused, not read as "any" or "the start" (nor trusted: the caption adds
        // to the offset).
        for bad in ["offset=9223372036854775807", "offset=-5", "offset=x", "environment=prod", "after=junk"] {
            #expect(try live.get("/admin/find?\(bad)", headers: ["Cookie": session]).status == 400)
        }
        for good in ["offset=0", "environment=", "environment=sandbox", "after=0%3APROD_1"] {
            #expect(try live.get("/admin/find?\(good)", headers: ["Cookie": session]).status == 200)
        }
        #expect(found.text.contains(">PROD_1</a>") && found.text.contains(">PROD_2</a>"))
        #expect(!found.text.contains("OTHER_1"))
        #expect(found.text.contains("value=\"PROD_\""))
        let all = try live.get("/admin/find", headers: ["Cookie": session]).text
        #expect(all.contains("OTHER_1"))
        #expect(all.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!all.contains("<script>"))
        #expect(all.contains("href=\"/admin/detail?id=%3Cscript%3Ealert%281%29%3C%2Fscript%3E\""))
        let reflected = try live.get("/admin/find?q=%3Cscript%3E", headers: ["Cookie": session]).text
        #expect(reflected.contains("value=\"&lt;script&gt;\""))
        #expect(!reflected.contains("<script>"))
        #expect(try live.get("/admin/find?q=PROD_", headers: [:]).status == 401)
    }

    @Test func theDetailPageShowsOneTokenEscaped() throws {
        let live = try Self.live()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try live.recordAppToken("<i>x</i>/..", now: now)
        try live.recordAppToken("PROD_9", now: now)
        let session = try Self.signIn(live)
        let detail = try live.get("/admin/detail?id=PROD_9", headers: ["Cookie": session])
        #expect(detail.status == 200)
        #expect(detail.text.contains("Token <code class=\"wrap\">PROD_9</code>"))
        #expect(detail.text.contains("<dt>Checkout</dt><dd>c-PROD_9</dd>"))
        let hostile = try live.get("/admin/detail?id=%3Ci%3Ex%3C%2Fi%3E%2F..", headers: ["Cookie": session])
        #expect(hostile.status == 200)
        #expect(hostile.text.contains("&lt;i&gt;x&lt;/i&gt;/..") && !hostile.text.contains("<i>x</i>"))
        #expect(try live.get("/admin/detail?id=nobody", headers: ["Cookie": session]).status == 404)
        #expect(try live.get("/admin/detail?id=PROD_9").status == 401)
    }
}
