import CSystem
import Lifecycle
public import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on epoll event loops with a worker pool for blocking handlers.
///
/// ```swift
/// var router = Router()
/// router.get("/healthz", execution: .eventLoop) { _ in .text("ok\n") }
/// let server = HTTPServer(configuration: .init(), router: router, logger: logger)
/// let port = try server.start()
/// ...
/// server.shutdown(gracePeriod: .seconds(10))
/// ```
public final class HTTPServer: Sendable {
    /// Called on the event loop after each response is queued: the request, its status and the time taken in
    /// nanoseconds. Must not block. Parser rejections are reported with method and target `-`; a request refused
    /// when its head arrives (404, 405, 413 for its body) with its own.
    public typealias Observer = @Sendable (_ request: HTTPRequest, _ status: HTTPStatus, _ nanoseconds: UInt64) -> Void

    private struct State {
        var listeners: [Int32] = []
        var port = 0
        var mailboxes: [LoopMailbox] = []
        var threads: [BackgroundThread] = []
        var stopped = false
    }

    private let context: ServerContext
    private let state = Mutex(State())

    public init(configuration: Configuration, router: Router, logger: Logger, observer: Observer? = nil) {
        context = ServerContext(configuration: configuration, router: router, logger: logger, observer: observer)
    }

    /// Whether this machine has `host` and nothing serves `port` on it: `linkout check` asks before a start.
    /// Throws the bind's error (`EADDRINUSE`, `EADDRNOTAVAIL`, a name that does not resolve).
    public static func checkAddress(host: String, port: Int) throws(SocketError) {
        try Socket.checkFree(host: host, port: port)
    }

    /// Binds and starts serving; returns the bound port (useful with port 0).
    @discardableResult
    public func start() throws(SocketError) -> Int {
        // A peer that vanishes mid-write must cost an EPIPE, never the process (no SO_NOSIGPIPE on Linux).
        signal(SIGPIPE, SIG_IGN)
        csystem_keep_freed_heap()
        let configuration = context.configuration
        // Every connection holds a descriptor; a soft limit left at a shell's 1024 would run out long before
        // `maxConnections` (then `DescriptorShortage` answers newcomers 503).
        let descriptors = csystem_raise_descriptor_limit()
        if descriptors >= 0, descriptors - Self.descriptorsBesideConnections < configuration.maxConnections {
            context.logger.warning(
                "the open file limit is below server.maxConnections: connections past it are answered 503",
                ["open_file_limit": String(descriptors), "max_connections": String(configuration.maxConnections)]
            )
        }
        let count = max(1, configuration.eventLoopCount)
        // One listening socket per loop on the same port (the first picks it when the port is 0).
        var listeners: [Int32] = []
        var loops: [(epoll: Epoll, mailbox: LoopMailbox)] = []
        var port = configuration.port
        do throws(SocketError) {
            // The loops share their port (SO_REUSEPORT), and so could another process of the same user: a second
            // server started on a port already served would take half its connections into another ledger.
            if count > 1 && port != 0 { try Socket.checkFree(host: configuration.host, port: port) }
            for _ in 0..<count {
                let bound = try Socket.listen(
                    host: configuration.host,
                    port: port,
                    backlog: configuration.backlog,
                    reusePort: count > 1
                )
                listeners.append(bound.fd)
                port = bound.port
                loops.append((try Epoll(), try LoopMailbox()))
            }
        } catch {
            for listener in listeners { Socket.close(listener) }
            throw error
        }
        let context = context
        var threads: [BackgroundThread] = []
        for (index, (loop, listener)) in zip(loops, listeners).enumerated() {
            threads.append(
                BackgroundThread(name: "linkout-loop-\(index)") {
                    EventLoop(
                        index: index,
                        epoll: loop.epoll,
                        mailbox: loop.mailbox,
                        listener: listener,
                        context: context
                    )
                    .run()
                    loop.mailbox.close()
                }
            )
        }
        state.withLock {
            $0.listeners = listeners
            $0.port = port
            $0.mailboxes = loops.map(\.mailbox)
            $0.threads = threads
        }
        return port
    }

    /// Descriptors the process holds besides its connections: the ledger's files, listeners, epoll sets, pipes,
    /// outbound calls.
    static let descriptorsBesideConnections = 64

    /// The bound port, once started.
    public var port: Int { state.withLock { $0.port } }

    /// Connections open right now.
    public var openConnections: Int { context.openConnections.load(ordering: .relaxed) }

    /// Connections refused with 503 because the cap was reached, since start.
    public var shedConnections: Int { context.shedConnections.load(ordering: .relaxed) }

    /// Stops accepting, lets in-flight requests finish for up to `gracePeriod`, closes idle connections, and
    /// returns when every loop and worker has stopped. Safe to call more than once.
    public func shutdown(gracePeriod: Duration = .seconds(10)) {
        let (mailboxes, threads, listeners, alreadyStopped) = state.withLock { state in
            defer { state.stopped = true }
            return (state.mailboxes, state.threads, state.listeners, state.stopped)
        }
        guard !alreadyStopped else { return }
        // Requests queued for another service are not started now: they get their route's `busy` answer while
        // their connections are still open, instead of waiting behind calls under way.
        context.beginStopping()
        for job in context.outbound.takeWaiting() { context.workers.submit(job) }
        let deadline = monotonicNanoseconds() + gracePeriod.nanoseconds
        for mailbox in mailboxes { mailbox.post(.drain(deadline: deadline)) }
        for thread in threads { thread.join() }
        for listener in listeners { Socket.close(listener) }
        for pool in [context.workers, context.outbound] { pool.finish() }
        for pool in [context.workers, context.outbound] { pool.join() }
    }
}
