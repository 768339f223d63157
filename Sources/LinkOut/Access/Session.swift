import Foundation
import HTTPServer

/// The browser session cookie: an opaque random id that CSRF tokens are bound to. It identifies nothing else.
enum Session {
    static let cookieName = "linkout_session"

    /// The session id the browser sent, if it has the shape of one we issued.
    static func id(in request: HTTPRequest) -> String? {
        for header in request.headers.values(for: "cookie") {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName else { continue }
                let value = parts[1].trimmingCharacters(in: .whitespaces)
                if Identifiers.isWellFormed(value) { return value }
            }
        }
        return nil
    }

    /// HttpOnly (no script can read it), SameSite=Lax (sent on the top-level navigation from StoreKit's browser
    /// hand-off, not on cross-site posts), Secure when served over https.
    static func cookie(_ id: String, secure: Bool) -> String {
        "\(cookieName)=\(id); Path=/; Max-Age=86400; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
    }
}
