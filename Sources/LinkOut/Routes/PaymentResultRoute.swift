import Crypto
import Domain
import HTTPServer
import Payments
import Storage

/// `GET /checkout/{id}/done?session_id=…`: where the provider sends the person back. It tells honestly where
/// the payment stands (paid, being confirmed, processing, not completed) from what the ledger knows; the
/// provider's redirect alone proves nothing, the webhook does.
struct PaymentResultRoute: Sendable {
    let configuration: Configuration
    let ledger: Ledger
    let identifiers: Identifiers
    let pages: Pages
    /// The provider the server runs with: its texts say what a completed payment was (live, test, demo).
    let provider: any PaymentProvider

    func show(_ request: HTTPRequest) throws -> HTTPResponse {
        let language = pages.language(for: request)
        guard let checkoutId = request.pathParameters["id"], Identifiers.isCheckoutId(checkoutId),
            let checkout = try ledger.tokens.checkout(id: CheckoutID(checkoutId)),
            let app = configuration.apps.first(where: { $0.bundleId == checkout.bundleId }),
            let sessionId = request.queryValue("session_id"),
            let session = try ledger.payments.paymentSession(id: sessionId), session.checkoutId.rawValue == checkoutId
        else {
            // Never "nothing was charged": a person who paid may come back here from another browser, without
            // the cookies, or late, and must not be sent to pay again.
            return pages.message(
                status: .notFound,
                title: "payment_unknown_here_title",
                message: "payment_unknown_here_message",
                request: request
            )
        }
        var context = pages.context(language: language, app: app, request: request)
        let product = configuration.catalog.first { $0.id == session.productId.rawValue }
        context["product_name"] = .text(product?.name(language: language) ?? session.productId.rawValue)
        // A subscription's price keeps its period: "€3.99/month", not a bare "€3.99".
        context["price"] = .text(
            session.money.map { pages.price($0, interval: product?.interval, language: language) } ?? ""
        )
        // Every state names the order, so a person can quote it to support whatever happened.
        context["order"] = .text(session.sessionId)
        let texts: (title: String, message: String)
        switch session.state {
        case .complete:
            // No "Payment received" for money that never moved: the demo and Stripe's test mode say what they are.
            // A session of another provider than the one running now (the configuration changed since): its mode
            // is not known, so it is not called real money.
            let completed =
                session.provider == provider.id
                ? provider.pageTexts : ProviderPageTexts(checkoutNote: "", mode: .test)
            texts = (completed.completedTitle, completed.completedMessage)
            context["paid"] = .flag(true)
            // The code rides on the way back into the app; the app's backend redeems it (once) for the purchase.
            // Showing this page never uses it up, and only the browser that paid sees it: a shared or previewed
            // result link shows the payment, not the code.
            if isPayer(request, session) {
                let code = identifiers.redemptionCode(purchaseId: session.sessionId)
                let link = app.returnURL.map { Self.appending(code: code, to: $0) }
                context["return_url"] = .text(link ?? "")
                context["scheme_url"] = .text(app.urlScheme.map { "\($0)://purchase?code=\(code)" } ?? "")
                context["code"] = .text(code)
                if link != nil {
                    context["qr_src"] = .text("/checkout/\(checkoutId)/qr.svg?session_id=\(session.sessionId)")
                }
                context["desktop"] = .flag(!Self.isPhone(request.headers["user-agent"]))
            } else {
                context["return_url"] = .text(app.returnURL ?? "")
                context["scheme_url"] = .text(app.urlScheme.map { $0 + "://" } ?? "")
            }
        case .open:
            // Back from the provider before its webhook arrived: look again in a moment.
            texts = ("result_waiting_title", "result_waiting_message")
            context["refresh"] = .flag(true)
        case .pending:
            texts = ("result_pending_title", "result_pending_message")
        case .expired, .failed:
            texts = ("result_failed_title", "result_failed_message")
            context["is_error"] = .flag(true)
            context["retry_url"] = .text("/checkout/" + checkoutId)
        }
        context["title"] = .text(pages.localization.text(texts.title, language: language))
        context["message"] = .text(pages.localization.text(texts.message, language: language))
        return pages.html(pages.paymentResult.render(context))
    }

    /// `GET /checkout/{id}/qr.svg?session_id=…`: the app link of a paid session as a QR code, drawn here (no
    /// third party sees the code), for a person on a computer to scan with the phone that has the app.
    func qrCode(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let checkoutId = request.pathParameters["id"], Identifiers.isCheckoutId(checkoutId),
            let checkout = try ledger.tokens.checkout(id: CheckoutID(checkoutId)),
            let returnURL = configuration.apps.first(where: { $0.bundleId == checkout.bundleId })?.returnURL,
            let sessionId = request.queryValue("session_id"),
            let session = try ledger.payments.paymentSession(id: sessionId), session.checkoutId.rawValue == checkoutId,
            session.state == .complete, isPayer(request, session)
        else { return HTTPError(.notFound, "Not found.").response }
        let link = Self.appending(code: identifiers.redemptionCode(purchaseId: session.sessionId), to: returnURL)
        let language = pages.language(for: request)
        guard let qr = try? QRCode(link, level: .medium) else { return HTTPError(.notFound, "Not found.").response }
        return HTTPResponse(
            status: .ok,
            headers: [
                "Content-Type": "image/svg+xml", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
                "Content-Security-Policy": "default-src 'none'",
            ],
            body: Array(qr.svg(label: pages.localization.text("result_qr_alt", language: language)).utf8)
        )
    }

    /// Whether this request comes from the browser session that started the payment.
    private func isPayer(_ request: HTTPRequest, _ session: PaymentSessionRecord) -> Bool {
        guard let expected = session.browserHash else { return false }
        guard let cookie = Session.id(in: request, identifiers: identifiers, secure: pages.isSecure) else {
            return false
        }
        return HMACSHA256.constantTimeEqual(
            Array(identifiers.browserHash(session: cookie).utf8),
            Array(expected.utf8)
        )
    }

    /// Where a payment's person lands when it is done (or to look at it again).
    static func path(checkoutId: CheckoutID, sessionId: String) -> String {
        "/checkout/\(checkoutId)/done?session_id=\(sessionId)"
    }

    /// `returnURL` with `code=` added to its query.
    static func appending(code: String, to url: String) -> String {
        url + (url.contains("?") ? "&" : "?") + "code=" + code
    }

    /// A phone or tablet opens the app from the button; anything else gets the code to scan or type.
    static func isPhone(_ userAgent: String?) -> Bool {
        guard let agent = userAgent else { return false }
        return ["iPhone", "iPad", "iPod", "Android", "Mobile"].contains { agent.contains($0) }
    }
}
