import Domain
import Foundation
import HTTPServer
import Lifecycle
import Logging
import Payments
import Storage

/// `GET /checkout/{id}` shows the catalog for one recorded visit; `POST /checkout/{id}` starts the payment for
/// the chosen product and sends the person to the provider's page (`CheckoutRoute+Submit.swift`).
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

    /// Products whose pay button can carry their own amount. The stylesheet shows the button of the checked
    /// product by its position (`:has(#product-N:checked) #pay-N`, no script), and spells out this many positions;
    /// a longer catalog gets one button without an amount.
    static let maxAmountButtons = 8

    func show(_ request: HTTPRequest) throws -> HTTPResponse {
        let language = pages.language(for: request)
        let (checkout, app) = try find(request)
        let session = Session.established(for: request, identifiers: identifiers, secure: pages.isSecure)
        var extraHeaders = HTTPHeaders()
        if let setCookie = session.setCookie { extraHeaders.add(name: "Set-Cookie", value: setCookie) }
        let currencies = Set(configuration.catalog.flatMap { $0.prices.keys })
        let currency = chooseCurrency(request, available: currencies)
        var context = pages.context(language: language, app: app, request: request)
        context["action"] = .text("/checkout/" + checkout.id.rawValue)
        context["csrf"] = .text(identifiers.csrfToken(session: session.id, scope: checkout.id.rawValue))
        context["currency"] = .text(currency)
        context["expired"] = .flag(isExpired(checkout))
        let seller = app.seller ?? app.name
        context["intro"] = .text(pages.localization.text("checkout_intro", language: language, ["seller": seller]))
        let offered = configuration.catalog.filter { $0.prices[currency] != nil }
        var products: [Template.Context] = []
        var buttons: [Template.Context] = []
        for product in offered {
            guard let amount = product.prices[currency] else { continue }
            let index = String(products.count)
            let price = pages.price(amount, interval: product.interval, language: language)
            products.append([
                "index": .text(index),
                "id": .text(product.id),
                "name": .text(product.name(language: language)),
                "price": .text(price),
                "description": .text(product.description(language: language) ?? ""),
                "renewal": .text(
                    product.kind == .subscription
                        ? pages.localization.text(
                            "checkout_renewal",
                            language: language,
                            [
                                "price": price,
                                "date": LocaleFormats.shared.day(clock.nowMilliseconds(), language: language),
                            ]
                        ) : ""
                ),
                "cancellation": .text(product.kind == .subscription ? cancellation(app, language: language) : ""),
                "checked": .flag(products.isEmpty),
            ])
            let label = product.kind == .subscription ? "checkout_subscribe" : "checkout_pay"
            buttons.append([
                "index": .text(index),
                "id": .text(product.id),
                "label": .text(pages.localization.text(label, language: language, ["price": price])),
            ])
        }
        context["products"] = .list(products)
        context["buttons"] = .list(offered.count <= Self.maxAmountButtons ? buttons : [])
        context["tax_note"] = .text(taxNoteKey.map { pages.localization.text($0, language: language) } ?? "")
        context["provider_note"] = .text(
            pages.localization.text(
                payments.provider.pageTexts.checkoutNote,
                language: language,
                ["seller": seller]
            )
        )
        let others = currencies.subtracting([currency]).sorted().map { code -> Template.Context in
            ["code": .text(code), "href": .text("/checkout/\(checkout.id)?currency=\(code)")]
        }
        context["other_currencies"] = .list(others)
        context["has_other_currencies"] = .flag(!others.isEmpty)
        return pages.html(pages.checkout.render(context), extraHeaders: extraHeaders)
    }

    /// The localization key of what the page says of tax beside the prices, or nil to say nothing. A provider
    /// that works out no tax sells the catalog's price with the tax `payments.taxRates` splits out of it: with
    /// none in force the sale carries no tax, and Apple is told tax 0.
    private var taxNoteKey: String? {
        switch payments.provider.pageTexts.taxNote {
        case .added: "checkout_tax_added"
        case .included:
            payments.provider.chargesTax || configuration.payments.taxRatesInForce.splitsOutTax
                ? "checkout_tax_included" : nil
        case .none: nil
        }
    }

    /// Where a subscription is cancelled. Not in the iPhone's Settings: those list only what the App Store bills.
    private func cancellation(_ app: AppConfiguration, language: String) -> String {
        guard let email = app.legal.supportEmail else {
            return pages.localization.text("checkout_cancel_where", language: language)
        }
        return pages.localization.text("checkout_cancel_where_email", language: language, ["email": email])
    }

    /// The recorded visit the path names, and its app; the not-found page for any other path.
    func find(_ request: HTTPRequest) throws -> (CheckoutRecord, AppConfiguration) {
        guard let id = request.pathParameters["id"], Identifiers.isCheckoutId(id),
            let checkout = try ledger.tokens.checkout(id: CheckoutID(id)),
            let app = configuration.apps.first(where: { $0.bundleId == checkout.bundleId })
        else { throw pages.error(.notFound, title: "not_found_title", message: "not_found_message") }
        return (checkout, app)
    }

    /// Apple: after `tokenExpirationDate`, "you no longer associate the token with new transactions".
    func isExpired(_ checkout: CheckoutRecord) -> Bool {
        ReportingPolicy.hasExpired(expiresAt: checkout.tokenExpiresAt, at: clock.nowMilliseconds())
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
}
