import HTTPServer

/// Every route the server answers, in one table: which handler, on which thread (event loop for cheap
/// in-memory answers, worker pool for anything that touches the ledger), behind which guard.
struct RouteTable: Sendable {
    let landingPaths: [String]
    let landing: LandingRoute
    let checkout: CheckoutRoute
    let paymentResult: PaymentResultRoute
    let demoPayment: DemoPaymentRoute?
    let paymentWebhook: PaymentWebhookRoute
    let redemptions: RedemptionAPI
    let appAccess: AppAccessAPI
    let appAccessAdmin: AppAccessAdminAPI
    let appSiteAssociation: AppSiteAssociationRoute
    let openAPI: OpenAPIRoute
    let tokens: TokenAPI
    let lineItems: LineItemsAPI
    let admin: AdminAPI
    let close: CloseMonitor
    let dashboard: DashboardRoute
    let staticFiles: StaticFiles
    let rateGuard: RateGuard
    let failedAuth: FailedAuthThrottle
    /// Records every admin write that succeeded.
    let audit: AuditTrail
    let readiness: Readiness
    let metrics: Metrics
    let notificationPath: String
    let appStoreNotifications: AppStoreNotificationRoute

    /// Every route that takes a body says how large: the server refuses a larger one when the head arrives, before
    /// buffering any of it (`GET` routes take none). The handlers check the same limits.
    func router() -> Router {
        var router = Router()
        router.refusalStyle = JSONRefusals.style(alsoAt: [notificationPath])
        addPages(to: &router)
        addAPIs(to: &router)
        addAdmin(to: &router)
        addAppAccess(to: &router)
        addOperations(to: &router)
        return router
    }

    /// The landings, the checkout and the payment pages, and the providers' webhooks.
    private func addPages(to router: inout Router) {
        let form = BodyLimit.upTo(CheckoutRoute.maxFormBytes)
        for path in landingPaths {
            router.addDeferred("GET", path) { [rateGuard, landing] request, responder in
                if let refusal = rateGuard.refusal(request, html: true) {
                    responder.respond(refusal)
                    return
                }
                landing.handle(request, responder)
            }
        }
        router.get("/checkout/{id}", handler: checkout.show)
        // Each post may call the payment provider and write a payment: limited like landings, and waiting on the
        // provider on threads of its own.
        router.post(
            "/checkout/{id}",
            execution: .outbound(busy: checkout.busy),
            bodyLimit: form,
            handler: rateGuard.limitPage(checkout.submit)
        )
        router.get("/checkout/{id}/done", handler: paymentResult.show)
        router.get("/checkout/{id}/qr.svg", handler: paymentResult.qrCode)
        router.get("/pay/return", handler: paymentResult.returned)
        if let demoPayment {
            router.get("/pay/demo/{intentId}", handler: demoPayment.show)
            router.post("/pay/demo/{intentId}", bodyLimit: form, handler: rateGuard.limitPage(demoPayment.submit))
            router.post(
                "/admin/demo/purchases/{purchaseId}/refund",
                bodyLimit: .noBody,
                handler: failedAuth.guarding(
                    audit.audited(
                        "demo.refund",
                        subject: Self.path("purchaseId"),
                        before: demoPayment.purchaseState,
                        demoPayment.refund
                    )
                )
            )
        }
        router.post(
            PaymentWebhookRoute.path,
            bodyLimit: .upTo(paymentWebhook.maxBodyBytes) { [paymentWebhook] in paymentWebhook.tooLarge($0) },
            handler: paymentWebhook.receive
        )
    }

    /// Apple's notifications and the JSON APIs for the app and its backend.
    private func addAPIs(to router: inout Router) {
        router.post(
            notificationPath,
            bodyLimit: .upTo(AppStoreNotificationRoute.maxBodyBytes) { [appStoreNotifications] in
                appStoreNotifications.tooLarge($0)
            },
            handler: appStoreNotifications.receive
        )
        router.post(
            "/v1/tokens",
            bodyLimit: .upTo(TokenAPI.maxBodyBytes, tooLarge: TokenAPI.tooLarge),
            handler: rateGuard.limit(tokens.forward)
        )
        router.post(
            "/v1/backend/tokens",
            bodyLimit: .upTo(TokenAPI.maxBodyBytes, tooLarge: TokenAPI.tooLarge),
            handler: rateGuard.limit(failedAuth.guarding(tokens.forwardFromBackend))
        )
        router.post(
            "/v1/redemptions",
            bodyLimit: .upTo(RedemptionBody.maxBodyBytes, tooLarge: RedemptionBody.tooLarge),
            handler: rateGuard.limit(failedAuth.guarding(redemptions.redeem))
        )
        router.get("/v1/purchases", handler: rateGuard.limit(failedAuth.guarding(redemptions.purchases)))
        router.get("/.well-known/apple-app-site-association", execution: .eventLoop) { [appSiteAssociation] request in
            appSiteAssociation.show(request)
        }
        router.get("/openapi.json", execution: .eventLoop) { [openAPI] request in openAPI.show(request) }
        router.post(
            "/v1/tokens/{externalPurchaseId}/line-items",
            bodyLimit: .upTo(LineItemsAPI.maxBodyBytes, tooLarge: LineItemsAPI.tooLarge)
                .admitting(failedAuth.guardingHead { [lineItems] in lineItems.credentialRefusal($0) }),
            handler: rateGuard.limit(failedAuth.guarding(lineItems.post))
        )
    }

    /// The operator's dashboard and admin API.
    private func addAdmin(to router: inout Router) {
        router.get("/admin", handler: dashboard.show)
        router.post("/admin/login", bodyLimit: .upTo(DashboardRoute.maxFormBytes), handler: dashboard.login)
        router.post("/admin/logout", bodyLimit: .upTo(DashboardRoute.maxFormBytes), handler: dashboard.logout)
        router.get("/admin/chart.svg", handler: dashboard.chart)
        router.get("/admin/find", handler: dashboard.find)
        router.get("/admin/detail", handler: dashboard.detail)
        router.get("/admin/reports", handler: failedAuth.guarding(admin.reports))
        router.get("/admin/tokens", handler: failedAuth.guarding(admin.tokens))
        router.get("/admin/tokens.csv", handler: failedAuth.guarding(admin.exportCSV))
        router.get("/admin/tokens/{externalPurchaseId}", handler: failedAuth.guarding(admin.token))
        addAttentionActions(to: &router)
        // Asks Apple for its copy of the report: waits on Apple's answer on threads of its own.
        router.get(
            "/admin/reports/{requestIdentifier}/apple",
            execution: .outbound(busy: { _ in AppleCopyGate.busy() }),
            handler: failedAuth.guarding(admin.appleCopy)
        )
        router.get("/admin/purchases", handler: failedAuth.guarding(admin.purchases))
        router.get("/admin/purchases.csv", handler: failedAuth.guarding(admin.purchasesCSV))
        router.get("/admin/webhooks", handler: failedAuth.guarding(admin.webhooks))
        router.get("/admin/audit", handler: failedAuth.guarding(admin.audit))
        router.get("/admin/revenue", handler: failedAuth.guarding(admin.revenue))
        router.get("/admin/line-items.csv", handler: failedAuth.guarding(admin.lineItemsCSV))
        router.get("/admin/money", handler: dashboard.money)
        router.get("/admin/money/chart.svg", handler: dashboard.moneyChart)
        router.get(
            "/admin/close",
            handler: failedAuth.guarding { [admin, close] in try admin.close($0, monitor: close) }
        )
    }

    /// Apps without a backend: the app's redemption and entitlement checks, the keys they verify with, and the
    /// operator's credential and key actions.
    private func addAppAccess(to router: inout Router) {
        router.post(
            "/v1/app/redemptions",
            bodyLimit: .upTo(RedemptionBody.maxBodyBytes, tooLarge: RedemptionBody.tooLarge),
            handler: rateGuard.limit(appAccess.redeem)
        )
        router.get("/v1/app/entitlements", handler: rateGuard.limit(appAccess.entitlements))
        router.get("/.well-known/jwks.json", handler: rateGuard.limit(appAccess.keySet))
        router.get("/admin/credentials", handler: failedAuth.guarding(appAccessAdmin.credentials))
        let credential = "/admin/credentials/{credentialId}"
        let credentialId = Self.path("credentialId")
        router.post(
            credential + "/revoke",
            bodyLimit: .noBody,
            handler: failedAuth.guarding(
                audit.audited(
                    "credential.revoke",
                    subject: credentialId,
                    before: appAccessAdmin.credentialState,
                    after: { _ in "revoked" },
                    appAccessAdmin.revoke
                )
            )
        )
        router.post(
            credential + "/reissue",
            bodyLimit: .noBody,
            handler: failedAuth.guarding(
                audit.audited(
                    "credential.reissue",
                    subject: credentialId,
                    before: appAccessAdmin.credentialState,
                    after: AppAccessAdminAPI.reissued,
                    appAccessAdmin.reissue
                )
            )
        )
        router.get("/admin/signing-keys", handler: failedAuth.guarding(appAccessAdmin.keys))
        router.post(
            "/admin/signing-keys/rotate",
            bodyLimit: .noBody,
            handler: failedAuth.guarding(
                audit.audited(
                    "signing_key.rotate",
                    subject: { _ in nil },
                    before: appAccessAdmin.signingState,
                    after: AppAccessAdminAPI.newKey,
                    appAccessAdmin.rotate
                )
            )
        )
        router.post(
            "/admin/signing-keys/{kid}/retire",
            bodyLimit: .noBody,
            handler: failedAuth.guarding { [audit, appAccessAdmin] request in
                // Whether it was forced (a leak) is in the request, not the answer.
                try audit.audited(
                    "signing_key.retire",
                    subject: Self.path("kid"),
                    before: appAccessAdmin.keyState,
                    after: { _ in AppAccessAdminAPI.retired(request) },
                    appAccessAdmin.retire
                )(request)
            }
        )
    }

    /// The audit subject of a route: one of its path parameters.
    static func path(_ name: String) -> @Sendable (HTTPRequest) -> String? {
        { $0.pathParameters[name] }
    }

    /// Health, readiness, metrics and static files.
    private func addOperations(to router: inout Router) {
        router.get("/readyz") { [readiness] _ in readiness.response() }
        router.get("/healthz", execution: .eventLoop) { _ in
            HTTPResponse(
                status: .ok,
                headers: ["Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store"],
                body: Array("ok\n".utf8)
            )
        }
        router.get("/static/{path...}", execution: .eventLoop) { [staticFiles] request in
            staticFiles.response(for: request.pathParameters["path"] ?? "", request: request)
        }
        // Browsers and iOS ask for these at the root whatever a page links; without them every visit logs a 404.
        for icon in ["favicon.ico", "apple-touch-icon.png"] {
            router.get("/" + icon, execution: .eventLoop) { [staticFiles] request in
                staticFiles.response(for: icon, request: request)
            }
        }
        // On the worker pool: the report gauges scan the outbox in SQLite, which must not hold an event loop.
        router.get("/metrics") { [metrics] _ in
            HTTPResponse(
                status: .ok,
                headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store"],
                body: Array(metrics.render().utf8)
            )
        }
    }

    /// The operator's answers to a token that needs attention (see `ReportActions`).
    private func addAttentionActions(to router: inout Router) {
        let token = "/admin/tokens/{externalPurchaseId}"
        // Resend, no-line-item and retract take no body: one is refused when the head arrives.
        let tokenId = Self.path("externalPurchaseId")
        let lineItem: @Sendable (HTTPRequest) -> String? = { request in
            (request.pathParameters["externalPurchaseId"] ?? "") + " " + (request.pathParameters["lineItemId"] ?? "")
        }
        let reportState: @Sendable (HTTPRequest) throws -> String? = { [admin] in try admin.reportState($0) }
        router.post(
            token + "/resend",
            bodyLimit: .noBody,
            handler: failedAuth.guarding(
                audit.audited("report.resend", subject: tokenId, before: reportState, admin.resend)
            )
        )
        router.post(
            token + "/no-line-item",
            bodyLimit: .noBody,
            handler: failedAuth.guarding(
                audit.audited("report.no_line_item", subject: tokenId, before: reportState, admin.reportNoLineItem)
            )
        )
        // A restated line item is one of Apple's line items: the line-item API's limit, refused when the head
        // arrives like a posted one.
        router.post(
            token + "/line-items/{lineItemId}/restate",
            bodyLimit: .upTo(LineItemsAPI.maxBodyBytes, tooLarge: LineItemsAPI.tooLarge)
                .admitting(failedAuth.guardingHead { [admin] in admin.authorize($0) }),
            handler: failedAuth.guarding(
                audit.audited("line_item.restate", subject: lineItem, before: reportState, admin.restate)
            )
        )
        router.post(
            token + "/line-items/{lineItemId}/retract",
            bodyLimit: .noBody,
            handler: failedAuth.guarding(
                audit.audited("line_item.retract", subject: lineItem, before: reportState, admin.retract)
            )
        )
    }
}
