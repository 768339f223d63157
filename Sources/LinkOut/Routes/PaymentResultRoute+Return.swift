import Crypto
import Domain
import Foundation
import HTTPServer
import Storage

/// `GET /pay/return`: the one fixed address a provider's hosted page sends everyone back to when it cannot name
/// the session in the URL (Paddle's hosted checkout has one redirect URL, set in Paddle's dashboard). The
/// checkout comes from the person's own browser: the checkout cookie set when they were sent to pay, and the
/// payment session that this browser's session started. It then shows the usual result page (paid, being
/// confirmed, failed) at `/checkout/{id}/done`.
extension PaymentResultRoute {
    /// Names the checkout the browser was last sent to pay for. Not a secret: the result page shows the code only
    /// to the browser session that started the payment.
    static let returnCookieName = "linkout_checkout"

    /// The `Set-Cookie` the checkout adds when it sends the person to a provider's page.
    static func returnCookie(checkoutId: CheckoutID, secure: Bool) -> String {
        "\(returnCookieName)=\(checkoutId); Path=/pay/return; Max-Age=86400; HttpOnly; SameSite=Lax"
            + (secure ? "; Secure" : "")
    }

    func returned(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let checkoutId = Self.cookie(Self.returnCookieName, in: request), Identifiers.isCheckoutId(checkoutId),
            let browser = Session.id(in: request, identifiers: identifiers, secure: pages.isSecure)
        else { return notFound(request) }
        let hash = Array(identifiers.browserHash(session: browser).utf8)
        let mine = try ledger.payments.paymentSessions(checkoutId: CheckoutID(checkoutId)).filter { session in
            session.browserHash.map { HMACSHA256.constantTimeEqual(Array($0.utf8), hash) } ?? false
        }
        guard let latest = mine.max(by: { $0.createdAt < $1.createdAt }) else { return notFound(request) }
        return pages.seeOther(Self.path(checkoutId: CheckoutID(checkoutId), sessionId: latest.sessionId))
    }

    /// As the result page's: this browser cannot tell whether a payment was made, so it never says none was.
    private func notFound(_ request: HTTPRequest) -> HTTPResponse {
        pages.message(
            status: .notFound,
            title: "payment_unknown_here_title",
            message: "payment_unknown_here_message",
            request: request
        )
    }

    private static func cookie(_ name: String, in request: HTTPRequest) -> String? {
        for header in request.headers.values(for: "cookie") {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }
}
