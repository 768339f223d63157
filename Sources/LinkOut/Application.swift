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
        let staticFiles = StaticFiles(root: configuration.server.publicDir)
        var router = Router()
        for path in configuration.landing.paths {
            router.addDeferred("GET", path, handler: landing.handle)
        }
        router.get("/checkout/{id}", handler: checkout.show)
        router.post("/checkout/{id}", handler: checkout.submit)
        router.post("/v1/tokens", handler: tokens.forward)
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
            let body = metrics.render(gauges: [
                ("linkout_connections_open", "Client connections open now.", serverBox.server?.openConnections ?? 0),
                (
                    "linkout_connections_shed_total", "Connections refused at the connection cap.",
                    serverBox.server?.shedConnections ?? 0
                ),
                (
                    "linkout_ledger_transactions_total", "Ledger transactions (each carries a batch of writes).",
                    ledger.commitCount
                ),
            ])
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
            metrics.observeRequest(
                route: Self.routeName(request, landingPaths: landingPaths),
                status: status.code,
                nanoseconds: nanoseconds
            )
        }
        serverBox.server = server
        for code in TokenRejection.allCodes {
            metrics.increment("linkout_tokens_rejected_total", [("reason", code)], by: 0)
        }
    }

    /// A bounded label for metrics: the route, never the raw path.
    static func routeName(_ request: HTTPRequest, landingPaths: Set<String>) -> String {
        let path = request.path
        if request.method == "-" { return "invalid" }
        if landingPaths.contains(String(path)) { return "landing" }
        if path.hasPrefix("/checkout/") { return "checkout" }
        if path.hasPrefix("/static/") { return "static" }
        switch path {
        case "/v1/tokens": return "tokens_api"
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
        return port
    }

    /// Graceful stop: no new connections, in-flight requests finish within the grace period, then the ledger
    /// commits what is queued and closes.
    public func shutdown() {
        logger.info("server stopping", ["grace_seconds": "\(configuration.server.shutdownGraceSeconds)"])
        server.shutdown(gracePeriod: .seconds(configuration.server.shutdownGraceSeconds))
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
