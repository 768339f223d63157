import ExternalPurchase
import Foundation
import HTTPServer
import Logging
import Storage
import Synchronization

/// The linkout server: configuration in, ledger opened, routes wired, HTTP core started.
public final class Application: Sendable {
    public let configuration: Configuration
    public let logger: Logger
    public let ledger: Ledger
    public let reporting: ReportingService
    private let server: HTTPServer
    private let metrics: Metrics

    /// Opens the ledger and loads templates; a problem with either is reported before anything listens.
    public init(configuration: Configuration, logger: Logger? = nil) throws {
        self.configuration = configuration
        let logger = logger ?? Logger(label: "linkout", level: configuration.logLevel)
        self.logger = logger
        let ledger = try Ledger(
            directory: configuration.dataDir,
            durability: configuration.durability == "normal" ? .normal : .full
        )
        self.ledger = ledger
        let metrics = Metrics()
        self.metrics = metrics
        ledger.observeIngestion { visits, outcomes in
            metrics.increment("linkout_visits_recorded_total", by: visits.count)
            for (visit, outcome) in zip(visits, outcomes) where outcome.isNewToken {
                if let token = visit.token {
                    metrics.increment(
                        "linkout_tokens_recorded_total",
                        [("environment", token.environment), ("source", token.source)]
                    )
                }
            }
        }
        let pages = try Pages.load(
            publicDir: configuration.server.publicDir,
            isSecure: configuration.server.publicURL.hasPrefix("https:")
        )
        let identifiers = Identifiers(secret: try ledger.secret(named: "identifiers"))
        let validator = TokenValidator(
            apps: Dictionary(configuration.apps.map { ($0.bundleId, $0.appAppleId) }) { first, _ in first }
        )
        let landing = LandingRoute(
            configuration: configuration,
            validator: validator,
            identifiers: identifiers,
            ledger: ledger,
            pages: pages,
            metrics: metrics,
            logger: logger
        )
        let checkout = CheckoutRoute(
            configuration: configuration,
            identifiers: identifiers,
            ledger: ledger,
            pages: pages,
            logger: logger
        )
        let tokens = TokenAPI(
            configuration: configuration,
            validator: validator,
            identifiers: identifiers,
            ledger: ledger,
            metrics: metrics
        )
        let reporting = ReportingService(configuration: configuration, ledger: ledger, logger: logger)
        self.reporting = reporting
        let lineItems = LineItemsAPI(configuration: configuration, ledger: ledger, reporting: reporting)
        let admin = AdminAPI(configuration: configuration, ledger: ledger, reporting: reporting)
        let staticFiles = StaticFiles(root: configuration.server.publicDir)
        let guardRate = RateGuard(
            limiter: RateLimiter(
                perSecond: Double(configuration.server.rateLimitPerSecond),
                burst: Double(configuration.server.rateLimitBurst)
            ),
            trustedProxies: Set(configuration.server.trustedProxies),
            pages: pages,
            metrics: metrics
        )
        var router = Router()
        for path in configuration.landing.paths {
            router.addDeferred("GET", path) { request, responder in
                if let refusal = guardRate.refusal(request, html: true) {
                    responder.respond(refusal)
                    return
                }
                landing.handle(request, responder)
            }
        }
        router.get("/checkout/{id}", handler: checkout.show)
        router.post("/checkout/{id}", handler: checkout.submit)
        router.post("/v1/tokens", handler: guardRate.limit(tokens.forward))
        router.post("/v1/tokens/{externalPurchaseId}/line-items", handler: guardRate.limit(lineItems.post))
        router.get("/admin/reports", handler: admin.reports)
        router.get("/admin/tokens", handler: admin.tokens)
        router.get("/admin/tokens.csv", handler: admin.exportCSV)
        router.get("/admin/tokens/{externalPurchaseId}", handler: admin.token)
        router.get("/admin/reports/{requestIdentifier}/apple", handler: admin.appleCopy)
        router.get("/readyz") { _ in Self.readiness(ledger: ledger, reporting: reporting) }
        router.get("/healthz", execution: .eventLoop) { _ in
            HTTPResponse(
                status: .ok,
                headers: ["Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store"],
                body: Array("ok\n".utf8)
            )
        }
        router.get("/static/{path...}", execution: .eventLoop) { request in
            staticFiles.response(for: request.pathParameters["path"] ?? "", request: request)
        }
        let landingPaths = Set(configuration.landing.paths)
        let serverBox = ServerBox()
        router.get("/metrics", execution: .eventLoop) { _ in
            let body = metrics.render(
                gauges: [
                    (
                        "linkout_connections_open", "Client connections open now.",
                        serverBox.server?.openConnections ?? 0
                    ),
                    (
                        "linkout_connections_shed_total", "Connections refused at the connection cap.",
                        serverBox.server?.shedConnections ?? 0
                    ),
                    (
                        "linkout_ledger_transactions_total", "Ledger transactions (each carries a batch of writes).",
                        ledger.commitCount
                    ),
                ] + Self.reportGauges(ledger: ledger, reporting: reporting)
            )
            return HTTPResponse(
                status: .ok,
                headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store"],
                body: Array(body.utf8)
            )
        }
        server = HTTPServer(configuration: configuration.httpServer, router: router, logger: logger) {
            request,
            status,
            nanoseconds in
            let route = Self.routeName(request, landingPaths: landingPaths)
            metrics.observeRequest(route: route, status: status.code, nanoseconds: nanoseconds)
            // The access line: the route, never the path or query (they can hold a token or a checkout id).
            if logger.level <= .info {
                logger.info(
                    "request",
                    [
                        "request.id": request.id, "http.method": request.method, "route": route,
                        "status": String(status.code), "duration_ms": String(format: "%.3f", Double(nanoseconds) / 1e6),
                    ]
                )
            }
        }
        serverBox.server = server
        for code in TokenRejection.allCodes {
            metrics.increment("linkout_tokens_rejected_total", [("reason", code)], by: 0)
        }
    }

    /// `/readyz`: 200 when the ledger takes writes; 503 with the reason when it does not. Reporting's state is
    /// shown but does not take the server out of rotation: visits must still be recorded while reports wait.
    static func readiness(ledger: Ledger, reporting: ReportingService) -> HTTPResponse {
        var lines: [String] = []
        var ready = true
        do {
            try ledger.checkWritable(at: WallClock.nowMilliseconds())
            lines.append("database: writable")
        } catch {
            ready = false
            lines.append("database: not writable: \(error)")
        }
        lines.append("configuration: valid")
        if reporting.isAlive() {
            lines.append("reporting: \(reporting.status.description)")
        } else {
            ready = false
            lines.append("reporting: the background service stopped answering")
        }
        return HTTPResponse(
            status: ready ? .ok : .serviceUnavailable,
            headers: ["Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store"],
            body: Array(((ready ? "ready\n" : "not ready\n") + lines.joined(separator: "\n") + "\n").utf8)
        )
    }

    /// Reports by state and the age of the oldest token Apple has not accepted a report for.
    static func reportGauges(ledger: Ledger, reporting: ReportingService) -> [(name: String, help: String, value: Int)]
    {
        guard let summary = try? ledger.reportSummary() else { return [] }
        var gauges: [(name: String, help: String, value: Int)] = StoredReport.State.allCases.map { state in
            (
                "linkout_reports_\(state.rawValue)", "Reports in the outbox in state \(state.rawValue).",
                Int(summary.counts[state] ?? 0)
            )
        }
        let age = summary.oldestUnreported.map { max(0, (WallClock.nowMilliseconds() - $0) / 1000) } ?? 0
        gauges.append(
            (
                "linkout_oldest_unreported_token_age_seconds", "Age of the oldest token without an accepted report.",
                Int(age)
            )
        )
        gauges.append(
            (
                "linkout_reporting_running", "1 while reports are being sent to Apple.",
                reporting.status == .running ? 1 : 0
            )
        )
        return gauges
    }

    /// A bounded label for metrics: the route, never the raw path.
    static func routeName(_ request: HTTPRequest, landingPaths: Set<String>) -> String {
        let path = request.path
        if request.method == "-" { return "invalid" }
        if landingPaths.contains(String(path)) { return "landing" }
        if path.hasPrefix("/checkout/") { return "checkout" }
        if path.hasPrefix("/static/") { return "static" }
        if path.hasPrefix("/v1/tokens/") { return "line_items_api" }
        if path.hasPrefix("/admin/") { return "admin" }
        switch path {
        case "/v1/tokens": return "tokens_api"
        case "/readyz": return "readyz"
        case "/healthz": return "healthz"
        case "/metrics": return "metrics"
        default: return "other"
        }
    }

    /// Binds and starts serving; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        let port = try server.start()
        logger.info("server started", ["server.host": configuration.server.host, "server.port": "\(port)"])
        if reporting.status != .running {
            logger.warning("reports wait in the outbox", ["reporting": reporting.status.description])
        }
        reporting.start()
        return port
    }

    /// Graceful stop: no new connections, in-flight requests finish within the grace period, then the ledger
    /// commits what is queued and closes.
    public func shutdown() {
        logger.info("server stopping", ["grace_seconds": "\(configuration.server.shutdownGraceSeconds)"])
        server.shutdown(gracePeriod: .seconds(configuration.server.shutdownGraceSeconds))
        reporting.stop()
        ledger.close()
        logger.info("server stopped")
    }
}

/// Lets the metrics route read gauges of the server it is registered on (created after the router).
private final class ServerBox: Sendable {
    private let value = Mutex<HTTPServer?>(nil)
    var server: HTTPServer? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
