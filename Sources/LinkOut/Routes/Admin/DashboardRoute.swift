import Domain
import Foundation
import HTTPServer
import Lifecycle
import Storage

/// `GET /admin`: the operator dashboard. Signed out it is the login form (the admin token, posted to
/// `/admin/login`, never in a URL); signed in it is server-rendered HTML without script. Off (404) unless
/// `LINKOUT_ADMIN_TOKEN` is set, like the JSON admin API.
struct DashboardRoute: Sendable {
    let configuration: Configuration
    let ledger: Ledger
    let reporting: ReportingService
    let pages: Pages
    let templates: DashboardPages
    let sessions: AdminSessions
    let throttle: FailedAuthThrottle
    /// Sign-ins and refused ones are recorded.
    let audit: AuditTrail
    let clock: Clock
    /// The monthly close's watch, for its panel (none: no panel).
    var close: CloseMonitor? = nil

    /// Largest login or logout form accepted.
    static let maxFormBytes = 4096
    /// Days the chart and the funnel cover.
    static let days = 30

    /// `GET /admin`
    func show(_ request: HTTPRequest) throws -> HTTPResponse {
        guard configuration.adminToken != nil else { return notFound(request) }
        guard let session = try sessions.signedIn(request) else { return loginForm(request, status: .ok, error: nil) }
        return pages.html(templates.overview.render(try overviewContext(session: session)))
    }

    /// `POST /admin/login`: the admin token against the login form's CSRF token. Refused tokens count toward the
    /// same failed-auth throttle as the bearer APIs, so the form is no faster way to guess.
    func login(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let adminToken = configuration.adminToken else { return notFound(request) }
        let client = throttle.client(of: request)
        if let seconds = throttle.retryAfter(for: client) {
            var response = loginForm(
                request,
                status: .tooManyRequests,
                error: "Too many refused tokens. Try again in \(seconds) seconds."
            )
            response.headers.add(name: "Retry-After", value: String(seconds))
            return response
        }
        guard let fields = formFields(request), let preLogin = sessions.loginId(in: request),
            let csrf = fields["csrf"], sessions.isValidCSRF(csrf, id: preLogin, scope: .login)
        else {
            return loginForm(request, status: .forbidden, error: "The form had expired. Sign in again.")
        }
        guard AdminSessions.isAdminToken(fields["token"] ?? "", adminToken) else {
            throttle.recordFailure(for: client)
            if throttle.recordsInAudit(client) {
                audit.record(
                    request,
                    actor: "refused:" + audit.fingerprint(fields["token"] ?? ""),
                    action: "dashboard.sign_in_failed",
                    subject: nil,
                    after: "refused (the client's first this hour; the throttle counts the rest)"
                )
            }
            return loginForm(request, status: .unauthorized, error: "That is not the admin token.")
        }
        audit.record(request, action: "dashboard.sign_in", subject: nil, after: "signed in")
        // A sign-in replaces the browser's earlier session rather than leaving it valid beside the new one.
        if let earlier = try sessions.signedIn(request) { try sessions.end(earlier) }
        let session = try sessions.create()
        var headers = HTTPHeaders()
        headers.add(name: "Set-Cookie", value: sessions.sessionCookie(session, seconds: AdminSessions.lifetimeSeconds))
        // The login form's id has done its job; a new form gets a new one.
        headers.add(name: "Set-Cookie", value: sessions.loginCookie("", seconds: 0))
        return pages.seeOther("/admin", extraHeaders: headers)
    }

    /// `POST /admin/logout`: ends the session (CSRF-checked, so no other site can sign the operator out).
    func logout(_ request: HTTPRequest) throws -> HTTPResponse {
        guard configuration.adminToken != nil else { return notFound(request) }
        guard let session = try sessions.signedIn(request) else { return pages.seeOther("/admin") }
        guard let fields = formFields(request), let csrf = fields["csrf"],
            sessions.isValidCSRF(csrf, id: session, scope: .signedIn)
        else { return loginForm(request, status: .forbidden, error: "The form had expired. Nothing was changed.") }
        try sessions.end(session)
        audit.record(request, action: "dashboard.sign_out", subject: nil, before: "signed in", after: "signed out")
        var headers = HTTPHeaders()
        headers.add(name: "Set-Cookie", value: sessions.sessionCookie("", seconds: 0))
        return pages.seeOther("/admin", extraHeaders: headers)
    }

    /// `GET /admin/chart.svg[?theme=dark]`: the tokens-per-day chart, for the signed-in page's `<img>`.
    func chart(_ request: HTTPRequest) throws -> HTTPResponse {
        guard configuration.adminToken != nil else { return notFound(request) }
        guard try sessions.signedIn(request) != nil else { return HTTPError(.unauthorized, "Sign in first.").response }
        var headers = pages.securityHeaders()
        headers.add(name: "Content-Type", value: "image/svg+xml; charset=utf-8")
        let svg = try chartData().svg(dark: request.queryValue("theme") == "dark")
        return HTTPResponse(status: .ok, headers: headers, body: Array(svg.utf8))
    }

    /// A page to answer a signed-out request to a signed-in page: the login form, 401.
    func requireSignIn(_ request: HTTPRequest) -> HTTPResponse {
        configuration.adminToken == nil
            ? notFound(request) : loginForm(request, status: .unauthorized, error: "Sign in to see this page.")
    }

    func notFound(_ request: HTTPRequest) -> HTTPResponse {
        pages.message(status: .notFound, title: "not_found_title", message: "not_found_message", request: request)
    }

    /// The login form, bound to the browser's pre-login id (minted and set here when it has none).
    func loginForm(_ request: HTTPRequest, status: HTTPStatus, error: String?) -> HTTPResponse {
        var headers = HTTPHeaders()
        let id: String
        if let existing = sessions.loginId(in: request) {
            id = existing
        } else {
            id = sessions.preLoginId()
            headers.add(name: "Set-Cookie", value: sessions.loginCookie(id, seconds: AdminSessions.loginFormSeconds))
        }
        var context: Template.Context = ["csrf": .text(sessions.csrfToken(id, scope: .login))]
        if let error { context["error"] = .text(error) }
        return pages.html(templates.login.render(context), status: status, extraHeaders: headers)
    }

    /// The fields of an urlencoded form, or nil when the body is not one or is too large.
    func formFields(_ request: HTTPRequest) -> [String: String]? {
        guard request.declares("application/x-www-form-urlencoded"), request.body.count <= Self.maxFormBytes
        else { return nil }
        var fields: [String: String] = [:]
        for item in FormDecoding.items(Substring(String(decoding: request.body, as: UTF8.self)))
        where fields[item.name] == nil {
            fields[item.name] = item.value
        }
        return fields
    }

    /// The first day the chart and funnel cover, and today (days since the epoch, UTC).
    var window: (first: Int64, last: Int64) {
        let today = clock.nowMilliseconds() / Milliseconds.day
        return (today - Int64(Self.days) + 1, today)
    }

    func chartData() throws -> DashboardChart {
        let (first, last) = window
        return DashboardChart(
            rows: try ledger.dashboard.dailyTokenCounts(since: first * Milliseconds.day),
            lastDay: last,
            dayCount: Self.days
        )
    }
}
