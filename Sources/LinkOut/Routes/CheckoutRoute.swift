import Foundation
import HTTPServer
import Lifecycle
import Logging
import Storage

/// `GET /checkout/{id}` shows the catalog for one recorded visit; `POST /checkout/{id}` starts the payment for
/// the chosen product and sends the person to the provider's page.
struct CheckoutRoute: Sendable {
    let configuration: Configuration
    let identifiers: Identifiers
    let ledger: Ledger
    let pages: Pages
    let payments: PaymentStarter
    let logger: Logger
    let clock: Clock

    /// Largest form body accepted.
    static let maxFormBytes = 4096

    func show(_ request: HTTPRequest) throws -> HTTPResponse {
        let language = pages.language(for: request)
        guard let (checkout, app) = try find(request) else { return notFound(language) }
        let session = Session.established(for: request, identifiers: identifiers, secure: pages.isSecure)
        var extraHeaders = HTTPHeaders()
        if let setCookie = session.setCookie { extraHeaders.add(name: "Set-Cookie", value: setCookie) }
        let currencies = Set(configuration.catalog.flatMap { $0.prices.keys })
        let currency = chooseCurrency(request, available: currencies)
        var context = pages.localization.texts(language)
        context["lang"] = .text(language)
        context["app_name"] = .text(app.name)
        context["action"] = .text("/checkout/" + checkout.id)
        context["csrf"] = .text(identifiers.csrfToken(session: session.id, checkoutId: checkout.id))
        context["currency"] = .text(currency)
        context["expired"] = .flag(isExpired(checkout))
        var products: [Template.Context] = []
        for product in configuration.catalog {
            guard let price = product.prices[currency] else { continue }
            products.append([
                "index": .text(String(products.count)),
                "id": .text(product.id),
                "name": .text(product.name(language: language)),
                "price": .text(price.formatted(language: language)),
                "subscription": .flag(product.kind == .subscription),
                "checked": .flag(products.isEmpty),
            ])
        }
        context["products"] = .list(products)
        let others = currencies.subtracting([currency]).sorted().map { code -> Template.Context in
            ["code": .text(code), "href": .text("/checkout/\(checkout.id)?currency=\(code)")]
        }
        context["other_currencies"] = .list(others)
        context["has_other_currencies"] = .flag(!others.isEmpty)
        return pages.html(pages.checkout.render(context), extraHeaders: extraHeaders)
    }

    func submit(_ request: HTTPRequest) throws -> HTTPResponse {
        let language = pages.language(for: request)
        guard let (checkout, app) = try find(request) else { return notFound(language) }
        let contentType = request.headers["content-type"]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/x-www-form-urlencoded") else {
            return pages.message(
                status: .unsupportedMediaType,
                title: "bad_form_title",
                message: "bad_form_message",
                language: language
            )
        }
        guard request.body.count <= Self.maxFormBytes else {
            return pages.message(
                status: .contentTooLarge,
                title: "bad_form_title",
                message: "bad_form_message",
                language: language
            )
        }
        // CSRF: the token must be the one derived from this browser's session cookie and this checkout.
        guard
            let form = VerifiedForm.read(
                request,
                identifiers: identifiers,
                secure: pages.isSecure,
                scope: checkout.id,
                maxBytes: Self.maxFormBytes
            )
        else {
            return pages.message(
                status: .forbidden,
                title: "bad_form_title",
                message: "expired_form_message",
                language: language
            )
        }
        guard !isExpired(checkout) else {
            return pages.message(
                status: .badRequest,
                title: "invalid_link_title",
                message: "invalid_link_message",
                detail: pages.localization.text("reason_expired", language: language),
                language: language
            )
        }
        guard let productId = form.field("product"),
            let product = configuration.catalog.first(where: { $0.id == productId }),
            let currency = form.field("currency"), let price = product.prices[currency]
        else {
            return pages.message(
                status: .badRequest,
                title: "bad_form_title",
                message: "bad_form_message",
                language: language
            )
        }
        switch try payments.start(
            checkout: checkout,
            product: product,
            price: price,
            language: language,
            browserSession: form.session
        ) {
        case .redirect(let url):
            return pages.seeOther(url)
        case .linkExpiring:
            return pages.message(
                status: .badRequest,
                title: "invalid_link_title",
                message: "invalid_link_message",
                detail: pages.localization.text("reason_expired", language: language),
                language: language
            )
        case .unavailable:
            var context = pages.context(language: language, appName: app.name)
            context["action"] = .text("/checkout/" + checkout.id)
            context["csrf"] = .text(identifiers.csrfToken(session: form.session, checkoutId: checkout.id))
            context["currency"] = .text(currency)
            context["product"] = .text(product.id)
            return pages.html(pages.paymentRetry.render(context))
        }
    }

    private func find(_ request: HTTPRequest) throws -> (CheckoutRecord, AppConfiguration)? {
        guard let id = request.pathParameters["id"], Identifiers.isWellFormed(id),
            let checkout = try ledger.checkout(id: id),
            let app = configuration.apps.first(where: { $0.bundleId == checkout.bundleId })
        else { return nil }
        return (checkout, app)
    }

    /// Apple: after `tokenExpirationDate`, "you no longer associate the token with new transactions".
    private func isExpired(_ checkout: CheckoutRecord) -> Bool {
        guard let expiry = checkout.tokenExpiresAt else { return false }
        return clock.nowMilliseconds() > expiry
    }

    /// `?currency=` if offered, else the region of `Accept-Language`, else EUR, else the first offered.
    private func chooseCurrency(_ request: HTTPRequest, available: Set<String>) -> String {
        if let asked = request.queryValue("currency")?.uppercased(), available.contains(asked) { return asked }
        if let regional = Localization.currency(acceptLanguage: request.headers["accept-language"]),
            available.contains(regional)
        {
            return regional
        }
        if available.contains("EUR") { return "EUR" }
        return available.sorted().first ?? "EUR"
    }

    private func notFound(_ language: String) -> HTTPResponse {
        pages.message(status: .notFound, title: "not_found_title", message: "not_found_message", language: language)
    }
}
