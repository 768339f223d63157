import Domain
import ExternalPurchase
import Foundation
import HTTPServer
package import Lifecycle
package import Logging
package import Storage

/// The linkout server: configuration in, ledger opened, routes wired, HTTP core started.
package final class Application: Sendable {
    package let configuration: Configuration
    package let logger: Logger
    package let ledger: Ledger
    package let reporting: ReportingService
    let payments: PaymentServices
    let metrics: Metrics
    private let notifications: AppStoreNotifications
    /// The monthly close's periodic watch (warning, gauges, `/readyz` detail).
    package let close: CloseMonitor
    /// The retention pass, when `retention.personalDataDays` is set.
    let retention: RetentionPass?
    /// Every service with a thread of its own, in the order they start; they stop in the reverse order. A
    /// service the others wake (reporting, the webhook sender) starts before them and stops after them, so none
    /// is woken once stopped while a waker still runs.
    private let services: [any BackgroundService]
    private let server: HTTPServer
    /// The routes the server answers (method and pattern), as registered.
    let routeRegistrations: [Router.Registration]
    /// Where a change of configuration since the last start is recorded, once this one is serving.
    private let audit: AuditTrail

    /// Opens the ledger and loads templates; a problem with either is reported before anything listens.
    package init(configuration: Configuration, logger: Logger? = nil, clock: Clock = .system) throws {
        self.configuration = configuration
        let logger = logger ?? Logger(label: "linkout", level: configuration.logLevel)
        self.logger = logger
        try configuration.checkTrustedCAFiles()
        // Line items written from now on are classified under the configured regimes; rows made under other
        // regimes are classified again first (one transaction).
        let ledger = try configuration.openLedger()
        self.ledger = ledger
        let metrics = Metrics()
        self.metrics = metrics
        Self.countIngestion(of: ledger, into: metrics)
        let pages = try Pages.load(
            publicDir: configuration.server.publicDir,
            isSecure: configuration.server.isSecure,
            apps: configuration.apps
        )
        let installationSecret = try ledger.settings.secret(named: "identifiers")
        let identifiers = Identifiers(secret: installationSecret)
        let audit = AuditTrail(
            ledger: ledger,
            clock: clock,
            logger: logger,
            trustedProxies: Set(configuration.server.trustedProxies),
            adminToken: configuration.adminToken,
            fingerprint: AuditFingerprint(secret: installationSecret)
        )
        self.audit = audit
        retention = configuration.retention.personalDataDays.map { days in
            RetentionPass(ledger: ledger, days: days, trail: audit, logger: logger, clock: clock)
        }
        let reporting = ReportingService(
            configuration: configuration,
            ledger: ledger,
            logger: logger,
            clock: clock,
            metrics: metrics
        )
        self.reporting = reporting
        let payments = try PaymentServices(
            configuration: configuration,
            ledger: ledger,
            identifiers: identifiers,
            reporting: reporting,
            metrics: metrics,
            logger: logger,
            clock: clock
        )
        self.payments = payments
        let notifications = try AppStoreNotifications(
            configuration: configuration,
            ledger: ledger,
            identifiers: identifiers,
            reporting: reporting,
            metrics: metrics,
            logger: logger,
            clock: clock
        )
        self.notifications = notifications
        let close = CloseMonitor(
            close: MonthlyClose(ledger: ledger, configuration: configuration),
            logger: logger,
            clock: clock
        )
        self.close = close
        let services: [(any BackgroundService)?] = [
            reporting, payments.webhooks, payments.processor, notifications, close, retention,
        ]
        self.services = services.compactMap { $0 }
        let routes = try Self.routeDependencies(
            configuration: configuration,
            ledger: ledger,
            identifiers: identifiers,
            pages: pages,
            reporting: reporting,
            payments: payments,
            notifications: notifications,
            close: close,
            audit: audit,
            metrics: metrics,
            logger: logger,
            clock: clock
        ).routeTable()
        let router = routes.router()
        routeRegistrations = router.registrations
        let server = Self.httpServer(configuration: configuration, router: router, logger: logger, metrics: metrics)
        self.server = server
        Self.addGauges(to: metrics, server: server, ledger: ledger, reporting: reporting, clock: clock, logger: logger)
        // The close's gauges come from its last pass, never from a read at scrape time.
        metrics.addGauges { close.gauges(now: clock.nowMilliseconds()) }
    }

    /// The token validator and failed-login throttle the routes share, with the services made so far.
    private static func routeDependencies(
        configuration: Configuration,
        ledger: Ledger,
        identifiers: Identifiers,
        pages: Pages,
        reporting: ReportingService,
        payments: PaymentServices,
        notifications: AppStoreNotifications,
        close: CloseMonitor,
        audit: AuditTrail,
        metrics: Metrics,
        logger: Logger,
        clock: Clock
    ) -> RouteDependencies {
        RouteDependencies(
            configuration: configuration,
            ledger: ledger,
            identifiers: identifiers,
            pages: pages,
            validator: TokenValidator(
                apps: Dictionary(configuration.apps.map { ($0.bundleId, $0.appAppleId) }) { first, _ in first }
            ),
            reporting: reporting,
            payments: payments,
            notifications: notifications,
            close: close,
            failedAuth: FailedAuthThrottle(trustedProxies: Set(configuration.server.trustedProxies), clock: clock),
            audit: audit,
            metrics: metrics,
            logger: logger,
            clock: clock
        )
    }

    /// The HTTP core over `router`, every finished request written to the access log.
    private static func httpServer(configuration: Configuration, router: Router, logger: Logger, metrics: Metrics)
        -> HTTPServer
    {
        var log = AccessLog(logger: logger, metrics: metrics, landingPaths: Set(configuration.landing.paths))
        log.notificationPath = configuration.apple.notificationPath
        log.mode = configuration.accessLog
        let accessLog = log
        return HTTPServer(configuration: configuration.httpServer, router: router, logger: logger) {
            request,
            status,
            nanoseconds in
            accessLog.record(request, status, nanoseconds)
        }
    }

    /// Gauges read at each scrape, and every token rejection reason at zero.
    private static func addGauges(
        to metrics: Metrics,
        server: HTTPServer,
        ledger: Ledger,
        reporting: ReportingService,
        clock: Clock,
        logger: Logger
    ) {
        metrics.addGauges {
            [
                .init(
                    name: "linkout_connections_open",
                    help: "Client connections open now.",
                    value: server.openConnections
                ),
                .init(
                    name: "linkout_connections_shed_total",
                    help: "Connections refused at the connection cap.",
                    value: server.shedConnections
                ),
                .init(
                    name: "linkout_ledger_transactions_total",
                    help: "Ledger transactions (each carries a batch of writes).",
                    value: ledger.commitCount
                ),
                .init(
                    name: "linkout_build_info",
                    help: "Always 1: the release and the schema version it migrates ledgers to.",
                    value: 1,
                    labels: [("version", Release.version), ("schema", String(Release.schemaVersion))]
                ),
            ] + ReportGauges.sample(ledger: ledger, reporting: reporting, clock: clock, logger: logger)
                + LedgerGauges.sample(ledger: ledger, reporting: reporting, clock: clock)
        }
        // Every reason shows from the first scrape, so a dashboard's rate() has a series to start from.
        for code in TokenRejection.allCodes {
            metrics.increment("linkout_tokens_rejected_total", [("reason", code)], by: 0)
        }
        // The counters the alert rules watch with increase() start at 0 too: a series whose first sample is
        // already 1 shows no increase, so the first webhook given up would never alert.
        for outcome in ["delivered", "retry", "failed"] {
            metrics.increment("linkout_webhooks_total", [("outcome", outcome)], by: 0)
        }
        metrics.increment("linkout_reporting_storage_errors_total", by: 0)
        for reason in PaymentEventProcessor.needingAPersonReasons {
            metrics.increment("linkout_payment_events_needing_a_person_total", [("reason", reason)], by: 0)
        }
    }

    /// Visits and new tokens are counted when they reach the tables, not when journaled.
    private static func countIngestion(of ledger: Ledger, into metrics: Metrics) {
        ledger.observeIngestion { visits, outcomes in
            metrics.increment("linkout_visits_recorded_total", by: visits.count)
            // Counted per batch: a metric's key is a string built and hashed, and a batch holds thousands of
            // landings of a few kinds.
            var tokens: [Environment: [TokenSource: Int]] = [:]
            for (visit, outcome) in zip(visits, outcomes) where outcome.isNewToken {
                if let token = visit.token {
                    tokens[token.token.environment, default: [:]][token.source, default: 0] += 1
                }
            }
            for (environment, sources) in tokens {
                for (source, count) in sources {
                    metrics.increment(
                        "linkout_tokens_recorded_total",
                        [("environment", environment.rawValue), ("source", source.rawValue)],
                        by: count
                    )
                }
            }
        }
    }

    /// Binds and starts serving; returns the bound port.
    @discardableResult
    package func start() throws -> Int {
        let port: Int
        do {
            port = try server.start()
        } catch {
            throw configuration.server.listeningError(error)
        }
        logger.info("server started", ["server.host": configuration.server.host, "server.port": "\(port)"])
        // Only a server that got this far runs on this configuration: one refused at start (a retired signing
        // key, a busy port) recorded its settings as changes, and the next good start changed them back.
        ConfigurationAudit.notice(configuration, ledger: ledger, trail: audit)
        if reporting.status != .running {
            logger.warning("reports wait in the outbox", ["reporting": reporting.status.description])
        }
        // A zeroing of free pages a killed `linkout erase` left half done (`PrivacyStore.zeroFreePages`): the
        // erasure is recorded, and the pages it had not reached may still hold what it rewrote.
        do {
            if try ledger.privacy.finishCutShortZeroing() {
                logger.warning("free pages a cut-short erasure was zeroing are zeroed now")
            }
        } catch {
            logger.error(
                "free pages a cut-short erasure was zeroing could not be zeroed: run linkout erase again",
                ["error": "\(error)"]
            )
        }
        for service in services { service.start() }
        return port
    }

    /// Graceful stop: no new connections, in-flight requests finish within the grace period, then the ledger
    /// commits what is queued and closes.
    package func shutdown() {
        logger.info("server stopping", ["grace_seconds": "\(configuration.server.shutdownGraceSeconds)"])
        server.shutdown(gracePeriod: .seconds(configuration.server.shutdownGraceSeconds))
        for service in services.reversed() { service.stop() }
        ledger.close()
        logger.info("server stopped")
    }
}
