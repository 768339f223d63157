import ExternalPurchase
import HTTPServer
import Lifecycle
import Logging
import Payments
import Storage

/// The services every route is built from, made once in `Application.init`: one place that says which route
/// gets which service.
struct RouteDependencies: Sendable {
    let configuration: Configuration
    let ledger: Ledger
    let identifiers: Identifiers
    let pages: Pages
    let validator: TokenValidator
    let reporting: ReportingService
    let payments: PaymentServices
    let notifications: AppStoreNotifications
    /// The monthly close's watch (the admin route, the dashboard panel and `/readyz` read it).
    let close: CloseMonitor
    let failedAuth: FailedAuthThrottle
    /// Who changed what: the admin API's writes and the dashboard's sign-ins.
    let audit: AuditTrail
    let metrics: Metrics
    let logger: Logger
    let clock: Clock

    /// Every route of the server, wired.
    func routeTable() throws -> RouteTable {
        let admin = AdminAPI(configuration: configuration, ledger: ledger, reporting: reporting)
        let keyring = try EntitlementKeyring(
            ledger: ledger,
            configuration: configuration.appEntitlements,
            clock: clock
        )
        return RouteTable(
            landingPaths: configuration.landing.paths,
            landing: landing(),
            checkout: checkout(),
            paymentResult: PaymentResultRoute(
                configuration: configuration,
                ledger: ledger,
                identifiers: identifiers,
                pages: pages,
                provider: payments.provider
            ),
            demoPayment: demoPayment(),
            paymentWebhook: PaymentWebhookRoute(
                payments: payments,
                ledger: ledger,
                metrics: metrics,
                logger: logger,
                clock: clock
            ),
            redemptions: RedemptionAPI(
                configuration: configuration,
                ledger: ledger,
                identifiers: identifiers,
                clock: clock
            ),
            appAccess: appAccess(keyring: keyring),
            appAccessAdmin: AppAccessAdminAPI(
                administration: AppAccessAdministration(
                    ledger: ledger,
                    identifiers: identifiers,
                    keyring: keyring,
                    clock: clock
                ),
                admin: admin
            ),
            appSiteAssociation: AppSiteAssociationRoute(apps: configuration.apps),
            openAPI: try OpenAPIRoute(publicDir: configuration.server.publicDir),
            tokens: tokens(),
            lineItems: LineItemsAPI(configuration: configuration, ledger: ledger, reporting: reporting, clock: clock),
            admin: admin,
            close: close,
            dashboard: try dashboard(),
            staticFiles: StaticFiles(
                root: configuration.server.publicDir,
                servedExtensions: StaticFiles.pageAssetExtensions
            ),
            rateGuard: rateGuard(),
            failedAuth: failedAuth,
            audit: audit,
            readiness: Readiness(ledger: ledger, reporting: reporting, clock: clock, close: close),
            metrics: metrics,
            notificationPath: configuration.apple.notificationPath,
            appStoreNotifications: AppStoreNotificationRoute(notifications: notifications)
        )
    }

    private func appAccess(keyring: EntitlementKeyring) -> AppAccessAPI {
        AppAccessAPI(
            ledger: ledger,
            identifiers: identifiers,
            issuer: EntitlementIssuer(
                ledger: ledger,
                keyring: keyring,
                policy: EntitlementPolicy(
                    renewalGraceMilliseconds: configuration.appEntitlements.renewalGraceSeconds * 1000
                ),
                issuer: configuration.server.publicURL,
                lifetimeSeconds: configuration.appEntitlements.lifetimeSeconds
            ),
            keyring: keyring,
            throttles: AppAccessThrottles(trustedProxies: Set(configuration.server.trustedProxies), clock: clock),
            logger: logger,
            clock: clock
        )
    }

    private func landing() -> LandingRoute {
        LandingRoute(
            configuration: configuration,
            validator: validator,
            identifiers: identifiers,
            ledger: ledger,
            pages: pages,
            metrics: metrics,
            logger: logger,
            clock: clock
        )
    }

    private func checkout() -> CheckoutRoute {
        CheckoutRoute(
            configuration: configuration,
            identifiers: identifiers,
            ledger: ledger,
            pages: pages,
            payments: payments.starter,
            logger: logger,
            clock: clock
        )
    }

    /// The demo's own page, only while the demo is the running provider (see `DemoPaymentRoute` for why it is the
    /// one provider with a route here).
    private func demoPayment() -> DemoPaymentRoute? {
        (payments.provider as? DemoPaymentProvider).map { demo in
            DemoPaymentRoute(
                configuration: configuration,
                ledger: ledger,
                identifiers: identifiers,
                pages: pages,
                provider: demo,
                processor: payments.processor,
                clock: clock
            )
        }
    }

    private func tokens() -> TokenAPI {
        TokenAPI(
            configuration: configuration,
            validator: validator,
            identifiers: identifiers,
            ledger: ledger,
            reporting: reporting,
            metrics: metrics,
            logger: logger,
            clock: clock
        )
    }

    private func dashboard() throws -> DashboardRoute {
        DashboardRoute(
            configuration: configuration,
            ledger: ledger,
            reporting: reporting,
            pages: pages,
            templates: try DashboardPages.load(publicDir: configuration.server.publicDir),
            sessions: AdminSessions(
                identifiers: identifiers,
                ledger: ledger,
                clock: clock,
                adminToken: configuration.adminToken,
                isSecure: configuration.server.isSecure
            ),
            throttle: failedAuth,
            audit: audit,
            clock: clock,
            close: close
        )
    }

    private func rateGuard() -> RateGuard {
        RateGuard(
            limiter: RateLimiter(
                perSecond: Double(configuration.server.rateLimitPerSecond),
                burst: Double(configuration.server.rateLimitBurst),
                clock: clock
            ),
            trustedProxies: Set(configuration.server.trustedProxies),
            pages: pages,
            metrics: metrics
        )
    }
}
