import Crypto
import Domain
import Foundation
import HTTPServer
import Lifecycle
import Storage

/// Signed-in operator sessions of the dashboard, kept in the ledger so that every instance on one database knows
/// them (a balancer may send each request elsewhere) and a restart keeps them; signing out ends one everywhere,
/// and a stolen cookie dies with its session. The ledger holds a keyed hash of each id, never the id. The cookie
/// is apart from the checkout's (its own name, `Path=/admin`, `SameSite=Strict`) so nothing a buyer's page sets
/// or reads can touch it.
///
/// Before sign-in a second cookie carries a minted, unstored id (`Identifiers.session()`) that the login form's
/// CSRF token is bound to; signing in starts a fresh session id, so an id planted before sign-in is worthless.
/// The two are apart so that showing the login form never overwrites a session: with `SameSite=Strict` a
/// signed-in operator who follows a link from another site arrives without cookies and sees the form.
final class AdminSessions: Sendable {
    static let cookieName = "linkout_admin"
    /// Under https: browsers accept a `__Secure-` cookie only with `Secure`. (`__Host-` would also demand
    /// `Path=/`, which would send the operator's cookie to every buyer-facing page.)
    static let secureCookieName = "__Secure-linkout_admin"
    static let loginCookieName = "linkout_admin_login"
    static let secureLoginCookieName = "__Secure-linkout_admin_login"
    /// How long a sign-in lasts.
    static let lifetimeSeconds: Int64 = 8 * 3600
    /// How long the login form's pre-session id is kept by the browser.
    static let loginFormSeconds: Int64 = 3600
    /// Above this many live sessions the ones closest to expiry are dropped, so the table stays bounded.
    static let maxSessions = 1024

    private let identifiers: Identifiers
    private let ledger: Ledger
    private let clock: Clock
    /// The admin token sessions are signed in with (none: the dashboard is off); each stored key covers it.
    private let adminToken: String
    let isSecure: Bool

    init(identifiers: Identifiers, ledger: Ledger, clock: Clock, adminToken: String?, isSecure: Bool) {
        self.identifiers = identifiers
        self.ledger = ledger
        self.clock = clock
        self.adminToken = adminToken ?? ""
        self.isSecure = isSecure
    }

    private func storedKey(_ id: String) -> String {
        identifiers.storedSessionKey(id, signedInWith: adminToken)
    }

    var cookieName: String { isSecure ? Self.secureCookieName : Self.cookieName }
    var loginCookieName: String { isSecure ? Self.secureLoginCookieName : Self.loginCookieName }

    /// The login form's id the request carries, if this installation minted it.
    func loginId(in request: HTTPRequest) -> String? {
        cookieId(named: loginCookieName, in: request)
    }

    /// The id in the request's cookie `name`, if this installation minted it.
    private func cookieId(named cookieName: String, in request: HTTPRequest) -> String? {
        cookieIds(named: cookieName, in: request).first
    }

    /// Every id in the request's cookies `name` that this installation minted, in the order sent.
    private func cookieIds(named cookieName: String, in request: HTTPRequest) -> [String] {
        var ids: [String] = []
        for header in request.headers.values(for: "cookie") {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName else { continue }
                let value = parts[1].trimmingCharacters(in: .whitespaces)
                if identifiers.isIssuedSession(value) { ids.append(value) }
            }
        }
        return ids
    }

    /// Most session cookies of one name a request is read for: a browser sends one per path that set it.
    static let sessionCookiesRead = 4

    /// The signed-in session the request carries, or nil. Each cookie of the name is tried (a few at most): one
    /// planted for a longer path (`/admin/`) comes before the operator's and made every page show the login form.
    func signedIn(_ request: HTTPRequest) throws(StorageError) -> String? {
        for id in cookieIds(named: cookieName, in: request).prefix(Self.sessionCookiesRead) {
            if let expiry = try ledger.adminSessions.adminSessionExpiry(key: storedKey(id)),
                clock.nowMilliseconds() < expiry
            {
                return id
            }
        }
        return nil
    }

    /// Starts a session and returns its id.
    func create() throws(StorageError) -> String {
        let id = identifiers.session()
        let now = clock.nowMilliseconds()
        try ledger.adminSessions.startAdminSession(
            key: storedKey(id),
            expiresAt: now + Self.lifetimeSeconds * 1000,
            now: now,
            keep: Self.maxSessions
        )
        return id
    }

    func end(_ id: String) throws(StorageError) {
        try ledger.adminSessions.endAdminSession(key: storedKey(id))
    }

    /// A fresh unstored id for the login form.
    func preLoginId() -> String { identifiers.session() }

    /// The `Set-Cookie` value that gives the browser session `id` for `seconds` (0 deletes the cookie).
    func sessionCookie(_ id: String, seconds: Int64) -> String {
        Self.cookie(cookieName, id, seconds: seconds, secure: isSecure)
    }

    /// The `Set-Cookie` value for the login form's id (0 seconds deletes it).
    func loginCookie(_ id: String, seconds: Int64) -> String {
        Self.cookie(loginCookieName, id, seconds: seconds, secure: isSecure)
    }

    private static func cookie(_ name: String, _ value: String, seconds: Int64, secure: Bool) -> String {
        "\(name)=\(value); Path=/admin; Max-Age=\(seconds); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// The CSRF token of a form shown to the holder of `id`; `scope` tells the login form from the signed-in ones.
    func csrfToken(_ id: String, scope: Scope) -> String {
        identifiers.csrfToken(session: id, scope: scope.rawValue)
    }

    func isValidCSRF(_ candidate: String, id: String, scope: Scope) -> Bool {
        identifiers.isValidCSRF(candidate, session: id, scope: scope.rawValue)
    }

    /// What a CSRF token is for. The values cannot collide with checkout ids (base32 characters only).
    enum Scope: String {
        case login = "admin-login"
        case signedIn = "admin"
    }

    /// Whether `presented` is the admin token, in time independent of where or whether they differ.
    static func isAdminToken(_ presented: String, _ token: String) -> Bool {
        let mac = HMACSHA256(key: Array("linkout-admin-login-comparison".utf8))
        return HMACSHA256.constantTimeEqual(mac.authenticate(presented), mac.authenticate(token))
    }
}
