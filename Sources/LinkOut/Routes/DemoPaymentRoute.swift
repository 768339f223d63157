import HTTPServer
import Lifecycle
import Payments
import Storage

/// `GET /pay/demo/{intentId}`: the demo provider's payment page, which says plainly that nothing is charged;
/// `POST` completes (a purchase and its Apple line item, exactly as a paid Stripe session makes them) or
/// cancels it. Only served while `payments.provider` is `demo`.
struct DemoPaymentRoute: Sendable {
    let configuration: Configuration
    let ledger: Ledger
    let identifiers: Identifiers
    let pages: Pages
    let provider: DemoPaymentProvider
    let mapper: PaymentChangeMapper
    let processor: PaymentEventProcessor
    let clock: Clock

    func show(_ request: HTTPRequest) throws -> HTTPResponse {
        let language = pages.language(for: request)
        guard let (session, product, app) = try find(request) else { return notFound(language) }
        guard session.state == .open else { return seeOther(result(session)) }
        var extraHeaders = HTTPHeaders()
        var sessionCookie = Session.id(in: request, identifiers: identifiers, secure: pages.isSecure)
        if sessionCookie == nil {
            let fresh = identifiers.session()
            sessionCookie = fresh
            extraHeaders.add(name: "Set-Cookie", value: Session.cookie(fresh, secure: pages.isSecure))
        }
        var context = pages.context(language: language, appName: app.name)
        context["product_name"] = .text(product.name(language: language))
        context["price"] = .text(
            Money(currency: session.currency, decimal: session.amount)?.formatted(language: language) ?? ""
        )
        context["action"] = .text("/pay/demo/" + session.intentId)
        context["csrf"] = .text(identifiers.csrfToken(session: sessionCookie ?? "", checkoutId: session.intentId))
        return pages.html(pages.paymentDemo.render(context), extraHeaders: extraHeaders)
    }

    func submit(_ request: HTTPRequest) throws -> HTTPResponse {
        let language = pages.language(for: request)
        guard let (session, product, _) = try find(request) else { return notFound(language) }
        let form = FormDecoding.items(Substring(String(decoding: request.body.prefix(4096), as: UTF8.self)))
        func field(_ name: String) -> String? { form.first { $0.name == name }?.value }
        guard let cookie = Session.id(in: request, identifiers: identifiers, secure: pages.isSecure),
            let csrf = field("csrf"),
            identifiers.isValidCSRF(csrf, session: cookie, checkoutId: session.intentId)
        else {
            return pages.message(
                status: .forbidden,
                title: "bad_form_title",
                message: "expired_form_message",
                language: language
            )
        }
        // A second click after the first completed lands on the result; nothing is recorded twice.
        guard session.state == .open else { return seeOther(result(session)) }
        let now = clock.nowMilliseconds()
        switch field("action") {
        case "complete":
            let completion = try provider.completion(of: checkoutRequest(session, product), at: now)
            try processor.apply(
                try mapper.purchase(completion, provider: provider.name, tookMoney: false, event: nil, at: now)
            )
            return seeOther(result(session))
        case "cancel":
            try processor.apply(
                PaymentChange(event: nil, outcome: "cancelled", sessionState: (session.sessionId, .expired), at: now)
            )
            return seeOther("/checkout/" + session.checkoutId)
        default:
            return pages.message(
                status: .badRequest,
                title: "bad_form_title",
                message: "bad_form_message",
                language: language
            )
        }
    }

    /// The request the session was started with, rebuilt from what the ledger recorded.
    private func checkoutRequest(_ session: PaymentSessionRecord, _ product: Product) -> CheckoutRequest {
        let checkout = try? ledger.checkout(id: session.checkoutId)
        return CheckoutRequest(
            intentId: session.intentId,
            checkoutId: session.checkoutId,
            externalPurchaseId: session.externalPurchaseId,
            bundleId: checkout?.bundleId ?? configuration.landing.defaultBundleId,
            product: CheckoutRequest.Product(
                id: product.id,
                displayName: product.name(language: session.language),
                kind: product.interval.map { .subscription($0) } ?? .oneTime
            ),
            price: CheckoutRequest.Price(currency: session.currency, amount: session.amount),
            language: session.language,
            successURL: result(session),
            cancelURL: "/checkout/" + session.checkoutId
        )
    }

    private func find(_ request: HTTPRequest) throws -> (PaymentSessionRecord, Product, AppConfiguration)? {
        guard let intentId = request.pathParameters["intentId"], Identifiers.isWellFormed(intentId),
            let session = try ledger.paymentSession(intentId: intentId), session.provider == provider.name,
            let product = configuration.catalog.first(where: { $0.id == session.productId }),
            let checkout = try ledger.checkout(id: session.checkoutId),
            let app = configuration.apps.first(where: { $0.bundleId == checkout.bundleId })
        else { return nil }
        return (session, product, app)
    }

    private func result(_ session: PaymentSessionRecord) -> String {
        "/checkout/\(session.checkoutId)/done?session_id=\(session.sessionId)"
    }

    private func seeOther(_ location: String) -> HTTPResponse {
        var headers = pages.securityHeaders()
        headers.add(name: "Location", value: location)
        return HTTPResponse(status: .seeOther, headers: headers)
    }

    private func notFound(_ language: String) -> HTTPResponse {
        pages.message(status: .notFound, title: "not_found_title", message: "not_found_message", language: language)
    }
}
