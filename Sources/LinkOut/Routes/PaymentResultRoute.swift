import HTTPServer
import Storage

/// `GET /checkout/{id}/done?session_id=…`: where the provider sends the person back. It tells honestly where
/// the payment stands (paid, being confirmed, processing, not completed) from what the ledger knows; the
/// provider's redirect alone proves nothing, the webhook does.
struct PaymentResultRoute: Sendable {
    let configuration: Configuration
    let ledger: Ledger
    let pages: Pages

    func show(_ request: HTTPRequest) throws -> HTTPResponse {
        let language = pages.language(for: request)
        guard let checkoutId = request.pathParameters["id"], Identifiers.isWellFormed(checkoutId),
            let checkout = try ledger.checkout(id: checkoutId),
            let app = configuration.apps.first(where: { $0.bundleId == checkout.bundleId }),
            let sessionId = request.queryValue("session_id"),
            let session = try ledger.paymentSession(id: sessionId), session.checkoutId == checkoutId
        else {
            return pages.message(
                status: .notFound,
                title: "not_found_title",
                message: "not_found_message",
                language: language
            )
        }
        var context = pages.context(language: language, appName: app.name)
        let product = configuration.catalog.first { $0.id == session.productId }
        context["product_name"] = .text(product?.name(language: language) ?? session.productId)
        context["price"] = .text(
            Money(currency: session.currency, decimal: session.amount)?.formatted(language: language) ?? ""
        )
        let texts: (title: String, message: String)
        switch session.state {
        case .complete:
            texts = ("result_paid_title", session.provider == "demo" ? "result_demo_message" : "result_paid_message")
            context["paid"] = .flag(true)
            context["reference"] = .text(session.sessionId)
            context["return_url"] = .text(app.returnURL ?? "")
            context["scheme_url"] = .text(app.urlScheme.map { $0 + "://" } ?? "")
        case .open:
            // Back from the provider before its webhook arrived: look again in a moment.
            texts = ("result_waiting_title", "result_waiting_message")
            context["refresh"] = .flag(true)
        case .pending:
            texts = ("result_pending_title", "result_pending_message")
            context["reference"] = .text(session.sessionId)
        case .expired, .failed:
            texts = ("result_failed_title", "result_failed_message")
            context["is_error"] = .flag(true)
            context["retry_url"] = .text("/checkout/" + checkoutId)
        }
        context["title"] = .text(pages.localization.text(texts.title, language: language))
        context["message"] = .text(pages.localization.text(texts.message, language: language))
        return pages.html(pages.paymentResult.render(context))
    }
}
