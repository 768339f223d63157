import Foundation
import HTTPServer
import Logging

/// The linkout server: configuration in, routes wired, HTTP core started.
public final class Application: Sendable {
    public let configuration: Configuration
    public let logger: Logger
    private let server: HTTPServer

    public init(configuration: Configuration, logger: Logger? = nil) {
        self.configuration = configuration
        let logger = logger ?? Logger(label: "linkout", level: configuration.logLevel)
        self.logger = logger
        let staticFiles = StaticFiles(root: configuration.server.publicDir)
        var router = Router()
        router.get("/healthz", execution: .eventLoop) { _ in
            var response = HTTPResponse.text("ok\n")
            response.headers.add(name: "Cache-Control", value: "no-store")
            return response
        }
        router.get("/static/{path...}", execution: .eventLoop) { request in
            staticFiles.response(for: request.pathParameters["path"] ?? "", request: request)
        }
        server = HTTPServer(configuration: configuration.httpServer, router: router, logger: logger)
    }

    /// Binds and starts serving; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        let port = try server.start()
        logger.info("server started", ["server.host": configuration.server.host, "server.port": "\(port)"])
        return port
    }

    /// Graceful stop: no new connections, in-flight requests finish within the configured grace period.
    public func shutdown() {
        logger.info("server stopping", ["grace_seconds": "\(configuration.server.shutdownGraceSeconds)"])
        server.shutdown(gracePeriod: .seconds(configuration.server.shutdownGraceSeconds))
        logger.info("server stopped")
    }
}
