import Logging
import Synchronization

/// What every event loop of one server shares. Immutable apart from the atomic counters.
final class ServerContext: Sendable {
    let configuration: HTTPServer.Configuration
    let router: Router
    let workers: WorkerPool
    /// The threads of handlers that wait on another service (`Router.Execution.outbound`), as many as `workers`.
    let outbound: WorkerPool
    let outboundAdmission: OutboundAdmission
    /// Set when the server begins to stop: requests for another service not started by then are not started.
    private let stopping = Atomic<Bool>(false)
    let logger: Logger
    let parser: RequestParser
    let observer: HTTPServer.Observer?
    /// Gives memory freed after a burst of bodies back to the kernel; every loop's sweep asks it.
    let heapTrimmer = HeapTrimmer()
    let openConnections = Atomic<Int>(0)
    let shedConnections = Atomic<Int>(0)
    /// The descriptor the loops keep in reserve for answering newcomers 503 when the process has none left.
    let descriptorShortage = DescriptorShortage()
    /// Open connections by client, for `maxConnectionsPerClient`. Shared by the loops, because the kernel spreads
    /// one client's connections over all of them.
    private let connectionsByClient: ClientConnectionCounts
    /// Random per process, so request ids from two runs never collide in a log store.
    let requestIDPrefix = String(UInt32.random(in: 0...UInt32.max), radix: 36) + "-"

    init(
        configuration: HTTPServer.Configuration,
        router: Router,
        logger: Logger,
        observer: HTTPServer.Observer?
    ) {
        self.configuration = configuration
        self.router = router
        self.logger = logger
        self.observer = observer
        self.parser = RequestParser(limits: configuration.limits)
        connectionsByClient = ClientConnectionCounts(cap: configuration.maxConnectionsPerClient)
        self.workers = WorkerPool(threads: configuration.workerThreads)
        self.outbound = WorkerPool(threads: configuration.workerThreads, name: "linkout-outbound")
        self.outboundAdmission = OutboundAdmission(threads: configuration.workerThreads)
    }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    func beginStopping() {
        stopping.store(true, ordering: .releasing)
    }

    /// Counts a new connection from `address`; false (and nothing counted) when its client is at the cap.
    func admitClient(_ address: String) -> Bool {
        connectionsByClient.admit(address)
    }

    /// A connection admitted by `admitClient` has closed.
    func releaseClient(_ address: String) {
        connectionsByClient.release(address)
    }

    /// Runs a handler; an `HTTPResponseError` (such as `HTTPError`) becomes the response it makes for the request,
    /// a `TemporaryUnavailability` a 503 with `Retry-After` in the router's style, anything else a generic 500
    /// (details logged only).
    /// The log line names the route's pattern, never the path: a path can carry a secret (a checkout id).
    func respond(_ handler: Router.Handler, to request: HTTPRequest, route: String) -> HTTPResponse {
        do {
            return try handler(request)
        } catch let error as any HTTPResponseError {
            return error.response(to: request)
        } catch let error as any TemporaryUnavailability where error.retryAfterSeconds != nil {
            let seconds = error.retryAfterSeconds ?? 1
            logger.error("handler unavailable", ["error": "\(error)", "route": route, "request.id": request.id])
            return router.styled(
                HTTPError(
                    .serviceUnavailable,
                    "The server cannot take this right now. Please try again later.",
                    headers: ["Retry-After": String(seconds)]
                ),
                request
            )
        } catch {
            logger.error("handler failed", ["error": "\(error)", "route": route, "request.id": request.id])
            return HTTPError(.internalServerError, "Something went wrong on our side. Please try again.").response
        }
    }
}
