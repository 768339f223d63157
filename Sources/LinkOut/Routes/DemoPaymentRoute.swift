import Domain
import HTTPServer
import Lifecycle
import Payments
import Storage

/// `GET /pay/demo/{intentId}`: the demo provider's payment page, which says plainly that nothing is charged;
/// `POST` completes (a purchase and its Apple line item, exactly as a paid Stripe session makes them) or
/// cancels it. The answer goes the way a provider's webhook goes: a `DemoEvent` is stored (deduplicated by its
/// id, so a second click stores nothing new) and the payment processor acts on it from storage, here before
/// the person is sent on, so the result page already shows it. Only served while `payments.provider` is `demo`.
///
/// The demo is the one provider with a page of linkout's own, so this route is here and not in its folder: the
/// page is linkout's HTML, reads the ledger and hands its answer to the event processor, none of which a
/// provider in `Payments` can reach. A provider that takes the payment on its own site needs no route but its
/// webhook (`POST /webhooks/{provider}`).
struct DemoPaymentRoute: Sendable {
    /// The page's paths, `/pay/demo/{intentId}`; the access log's `demo_payment` label too.
    static let pathPrefix = "/pay/demo/"

    let configuration: Configuration
    let ledger: Ledger
    let identifiers: Identifiers
    let pages: Pages
    let provider: DemoPaymentProvider
    let processor: PaymentEventProcessor
    let clock: Clock

    func show(_ request: HTTPRequest) throws -> HTTPResponse {
        let language = pages.language(for: request)
        guard let (session, product, _, app) = try find(request) else { return notFound(request) }
        guard session.state == .open else { return pages.seeOther(result(session)) }
        let browser = Session.established(for: request, identifiers: identifiers, secure: pages.isSecure)
        var extraHeaders = HTTPHeaders()
        if let setCookie = browser.setCookie { extraHeaders.add(name: "Set-Cookie", value: setCookie) }
        var context = pages.context(language: language, app: app, request: request)
        context["product_name"] = .text(product.name(language: language))
        context["price"] = .text(
            session.money.map { pages.price($0, interval: product.interval, language: language) } ?? ""
        )
        context["action"] = .text(Self.pathPrefix + session.intentId)
        context["csrf"] = .text(identifiers.csrfToken(session: browser.id, scope: session.intentId))
        return pages.html(pages.paymentDemo.render(context), extraHeaders: extraHeaders)
    }

    func submit(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let (session, product, checkout, app) = try find(request) else { return notFound(request) }
        guard
            let form = VerifiedForm.read(
                request,
                identifiers: identifiers,
                secure: pages.isSecure,
                scope: session.intentId,
                maxBytes: CheckoutRoute.maxFormBytes
            )
        else {
            return pages.message(
                status: .forbidden,
                title: "bad_form_title",
                message: "expired_form_message",
                request: request,
                app: app
            )
        }
        // A form of neither button is refused whatever the payment's state (not sent to the result as a click).
        let action = form.field("action")
        guard action == "complete" || action == "cancel" else {
            return pages.message(
                status: .badRequest,
                title: "bad_form_title",
                message: "bad_form_message",
                request: request,
                app: app
            )
        }
        // A second click after the first completed lands on the result; nothing is recorded twice.
        guard session.state == .open else { return pages.seeOther(result(session)) }
        let now = clock.nowMilliseconds()
        // Completing and cancelling exclude each other: of two posts at once (a second tab, a double click on
        // both buttons) the first stored decides, and every answer goes where that decision leads.
        let started = checkoutRequest(session, product, checkout)
        let completed = DemoEvent(DemoEvent.completed, request: started, at: now)
        let cancelled = DemoEvent(DemoEvent.cancelled, request: started, at: now)
        let back = "/checkout/" + session.checkoutId.rawValue
        if action == "complete" {
            return pages.seeOther(try decide(completed, over: cancelled) ? result(session) : back)
        }
        return pages.seeOther(try decide(cancelled, over: completed) ? back : result(session))
    }

    /// `POST /admin/demo/purchases/{purchaseId}/refund` (bearer `LINKOUT_ADMIN_TOKEN`): gives a completed demo
    /// purchase back in full, as a provider's refund would (a `REFUND` line item for Apple's sandbox,
    /// `purchase.refunded` for the backend, the app's entitlement ended), so the loop can be tried end to end.
    func refund(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let adminToken = configuration.adminToken else { return JSONRefusals.notFound }
        guard BearerAuth.isAuthorized(request, token: adminToken) else { return BearerAuth.unauthorized() }
        let purchaseId = request.pathParameters["purchaseId"] ?? ""
        guard let purchase = try ledger.payments.purchase(id: purchaseId), purchase.provider == provider.id,
            let session = try ledger.payments.paymentSession(id: purchaseId),
            let product = configuration.catalog.first(where: { $0.id == session.productId.rawValue }),
            let checkout = try ledger.tokens.checkout(id: session.checkoutId)
        else {
            return JSONResponse.error(.notFound, "unknown_purchase", "No demo purchase has this id.")
        }
        guard purchase.status != .refunded else {
            return JSONResponse.error(.conflict, "already_refunded", "This purchase was refunded before.")
        }
        let now = clock.nowMilliseconds()
        // The refund's event has one id per purchase: a second refund asked at the same moment finds it stored.
        guard try store(DemoEvent(DemoEvent.refunded, request: checkoutRequest(session, product, checkout), at: now))
        else {
            return JSONResponse.error(.conflict, "already_refunded", "This purchase was refunded before.")
        }
        guard let refunded = try ledger.payments.purchase(id: purchaseId) else {
            return JSONResponse.error(.notFound, "unknown_purchase", "No demo purchase has this id.")
        }
        return JSONResponse.json(.ok, refunded)
    }

    /// The purchase's status before a refund, for the audit log.
    @Sendable func purchaseState(_ request: HTTPRequest) throws -> String? {
        try ledger.payments.purchase(id: request.pathParameters["purchaseId"] ?? "")?.status.rawValue
    }

    /// Stores the page's answer as the demo's event, then has the processor act on it (and anything else
    /// pending) at once. False when that event was stored before.
    @discardableResult
    private func store(_ event: DemoEvent) throws -> Bool {
        let isNew = try ledger.payments.storePaymentEvent(try stored(event))
        if isNew { processor.processPending() }
        return isNew
    }

    /// Stores `event` unless `rival` is stored already; true when `event` stands (stored now or before).
    private func decide(_ event: DemoEvent, over rival: DemoEvent) throws -> Bool {
        let found = try ledger.payments.storePaymentEvent(try stored(event), unlessStored: [rival.id])
        if found == nil { processor.processPending() }
        return found == nil
    }

    /// The event as the ledger keeps a provider's.
    private func stored(_ event: DemoEvent) throws -> StoredPaymentEvent {
        StoredPaymentEvent(
            provider: provider.id,
            eventId: event.id,
            type: event.type,
            body: String(decoding: try event.body(), as: UTF8.self),
            receivedAt: event.created
        )
    }

    /// The request the session was started with, rebuilt from what the ledger recorded.
    private func checkoutRequest(_ session: PaymentSessionRecord, _ product: Product, _ checkout: CheckoutRecord)
        -> CheckoutRequest
    {
        CheckoutRequest(
            intentId: session.intentId,
            checkoutId: session.checkoutId,
            externalPurchaseId: session.externalPurchaseId,
            bundleId: checkout.bundleId,
            product: CheckoutRequest.Product(
                id: product.id,
                displayName: product.name(language: session.language),
                kind: product.interval.map { .subscription($0) } ?? .oneTime
            ),
            price: CheckoutRequest.Price(currency: session.currency, amount: session.amount),
            language: session.language,
            successURL: result(session),
            cancelURL: "/checkout/" + session.checkoutId.rawValue
        )
    }

    private func find(_ request: HTTPRequest) throws -> (
        PaymentSessionRecord, Product, CheckoutRecord, AppConfiguration
    )? {
        guard let intentId = request.pathParameters["intentId"], Identifiers.isWellFormed(intentId),
            let session = try ledger.payments.paymentSession(intentId: intentId),
            session.provider == provider.id,
            let product = configuration.catalog.first(where: { $0.id == session.productId.rawValue }),
            let checkout = try ledger.tokens.checkout(id: session.checkoutId),
            let app = configuration.apps.first(where: { $0.bundleId == checkout.bundleId })
        else { return nil }
        return (session, product, checkout, app)
    }

    private func result(_ session: PaymentSessionRecord) -> String {
        PaymentResultRoute.path(checkoutId: session.checkoutId, sessionId: session.sessionId)
    }

    private func notFound(_ request: HTTPRequest) -> HTTPResponse {
        pages.message(status: .notFound, title: "not_found_title", message: "not_found_message", request: request)
    }
}
