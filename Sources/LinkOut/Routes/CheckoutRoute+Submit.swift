import Domain
import HTTPServer
import Storage

/// `POST /checkout/{id}`: the chosen product's payment is started and the person sent to the provider's page. Each
/// refusal is a thrown `PageError`, which the server turns into its page.
extension CheckoutRoute {
    /// What the form chose: the product, and its price in the currency the page showed.
    struct Choice {
        let product: Product
        let currency: String
        let price: Money
    }

    func submit(_ request: HTTPRequest) throws -> HTTPResponse {
        let (checkout, app) = try find(request)
        let form = try verifiedForm(request, checkout: checkout, app: app)
        guard !isExpired(checkout) else { throw expiredLink(app) }
        let choice = try chosen(in: form, app: app)
        switch try payments.start(
            checkout: checkout,
            product: choice.product,
            price: choice.price,
            language: pages.language(for: request),
            browserSession: form.session
        ) {
        case .redirect(let url):
            return redirect(to: url, paying: checkout)
        case .paid(let sessionId):
            return redirect(
                to: PaymentResultRoute.path(checkoutId: checkout.id, sessionId: sessionId),
                paying: checkout
            )
        case .linkExpiring:
            throw expiredLink(app)
        case .unavailable:
            return retryPage(request, checkout: checkout, app: app, form: form, choice: choice)
        }
    }

    /// The retry page for a post that was not sent to the provider: it waited too long for a thread of the
    /// provider's pool (the provider is slow for everyone) or came as the server stops. The form is checked as
    /// `submit` checks it, so a bad one is refused the same way.
    func busy(_ request: HTTPRequest) throws -> HTTPResponse {
        let (checkout, app) = try find(request)
        let form = try verifiedForm(request, checkout: checkout, app: app)
        guard !isExpired(checkout) else { throw expiredLink(app) }
        let choice = try chosen(in: form, app: app)
        return retryPage(request, checkout: checkout, app: app, form: form, choice: choice)
    }

    /// The form as this checkout's page posts it: url-encoded, no larger than `maxFormBytes`, and carrying the
    /// CSRF token derived from this browser's session cookie and this checkout.
    private func verifiedForm(
        _ request: HTTPRequest,
        checkout: CheckoutRecord,
        app: AppConfiguration
    ) throws(PageError) -> VerifiedForm {
        guard request.declares("application/x-www-form-urlencoded") else {
            throw badForm(.unsupportedMediaType, app: app)
        }
        guard request.body.count <= Self.maxFormBytes else { throw badForm(.contentTooLarge, app: app) }
        guard
            let form = VerifiedForm.read(
                request,
                identifiers: identifiers,
                secure: pages.isSecure,
                scope: checkout.id.rawValue,
                maxBytes: Self.maxFormBytes
            )
        else { throw pages.error(.forbidden, title: "bad_form_title", message: "expired_form_message", app: app) }
        return form
    }

    /// The product and currency the form names. An amount button names its product (`pay_for`): without the
    /// stylesheet every button shows, and the one pressed must buy what it says, whatever radio is checked. With
    /// it, the two always agree.
    private func chosen(in form: VerifiedForm, app: AppConfiguration) throws(PageError) -> Choice {
        guard let productId = form.field("pay_for") ?? form.field("product"),
            let product = configuration.catalog.first(where: { $0.id == productId }),
            let currency = form.field("currency"), let price = product.prices[currency]
        else { throw badForm(.badRequest, app: app) }
        return Choice(product: product, currency: currency, price: price)
    }

    /// The provider's page. One that returns everyone to one address (`/pay/return`) is followed by the checkout
    /// this browser went to pay for, which the cookie names.
    private func redirect(to url: String, paying checkout: CheckoutRecord) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add(
            name: "Set-Cookie",
            value: PaymentResultRoute.returnCookie(checkoutId: checkout.id, secure: pages.isSecure)
        )
        return pages.seeOther(url, extraHeaders: headers)
    }

    /// The provider could not start the payment: the same choice, one button away from another try.
    private func retryPage(
        _ request: HTTPRequest,
        checkout: CheckoutRecord,
        app: AppConfiguration,
        form: VerifiedForm,
        choice: Choice
    ) -> HTTPResponse {
        var context = pages.context(language: pages.language(for: request), app: app, request: request)
        context["action"] = .text("/checkout/" + checkout.id.rawValue)
        context["csrf"] = .text(identifiers.csrfToken(session: form.session, scope: checkout.id.rawValue))
        context["currency"] = .text(choice.currency)
        context["product"] = .text(choice.product.id)
        return pages.html(pages.paymentRetry.render(context))
    }

    /// A form this checkout's page would not have posted.
    private func badForm(_ status: HTTPStatus, app: AppConfiguration) -> PageError {
        pages.error(status, title: "bad_form_title", message: "bad_form_message", app: app)
    }

    /// The link's token has expired, or would before a payment could complete: a fresh link from the app is the
    /// way on.
    private func expiredLink(_ app: AppConfiguration) -> PageError {
        pages.error(
            .badRequest,
            title: "invalid_link_title",
            message: "invalid_link_message",
            detail: "reason_expired",
            app: app
        )
    }
}
