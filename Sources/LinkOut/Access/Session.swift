import Foundation
import HTTPServer

/// The browser session cookie: an opaque id that CSRF tokens are bound to. It identifies nothing else. Only ids
/// the server minted (`Identifiers.session()`) count; anything else a browser sends is ignored and replaced.
enum Session {
    static let cookieName = "linkout_session"
    /// Under https the cookie carries the `__Host-` prefix: browsers then accept it only with `Secure`,
    /// `Path=/` and no `Domain`, so a neighbouring subdomain or a plain-http page cannot plant one.
    static let secureCookieName = "__Host-linkout_session"

    static func name(secure: Bool) -> String { secure ? secureCookieName : cookieName }

    /// The session id the browser sent, if this installation issued it.
    static func id(in request: HTTPRequest, identifiers: Identifiers, secure: Bool) -> String? {
        let name = name(secure: secure)
        for header in request.headers.values(for: "cookie") {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name else { continue }
                let value = parts[1].trimmingCharacters(in: .whitespaces)
                if identifiers.isIssuedSession(value) { return value }
            }
        }
        return nil
    }

    /// HttpOnly (no script can read it), SameSite=Lax (sent on the top-level navigation from StoreKit's browser
    /// hand-off, not on cross-site posts), Secure and `__Host-` when served over https.
    static func cookie(_ id: String, secure: Bool) -> String {
        "\(name(secure: secure))=\(id); Path=/; Max-Age=86400; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
    }

    /// The `Set-Cookie` of a fresh session id, replacing whatever session the browser has (a landing, so a
    /// session planted before it is not kept).
    static func rotated(secure: Bool, identifiers: Identifiers) -> String {
        cookie(identifiers.session(), secure: secure)
    }

    /// The browser's session id, minting one (and the `Set-Cookie` that gives it to the browser) when it has none.
    static func established(for request: HTTPRequest, identifiers: Identifiers, secure: Bool) -> (
        id: String, setCookie: String?
    ) {
        if let id = id(in: request, identifiers: identifiers, secure: secure) { return (id, nil) }
        let fresh = identifiers.session()
        return (fresh, cookie(fresh, secure: secure))
    }
}
