import CSystem
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One epoll set served by one thread. It accepts from the shared listening socket, reads, parses, runs
/// non-blocking handlers inline, hands blocking ones to the worker pool and writes responses. Idle connections
/// cost a few hundred bytes and no thread.
final class EventLoop: Sendable {
    enum Message: Sendable {
        /// A worker finished a handler for connection `id` on descriptor `fd`.
        case completed(fd: Int32, id: UInt64, response: HTTPResponse, startedAt: UInt64, request: HTTPRequest)
        /// Stop accepting, finish in-flight requests, close the rest at `deadline` (monotonic ns).
        case drain(deadline: UInt64)
    }

    let index: Int
    private let epoll: Int32
    private let wakeFD: Int32
    private let mailbox = Mutex<[Message]>([])
    private let stopped = DispatchSemaphore(value: 0)
    /// Set when the loop's thread has returned; late messages (a handler finishing after a forced stop) are dropped.
    private let finished = Atomic<Bool>(false)

    init(index: Int) throws(SocketError) {
        self.index = index
        epoll = csystem_epoll_create()
        guard epoll >= 0 else { throw SocketError(operation: "epoll_create1", errno: errno) }
        wakeFD = csystem_eventfd()
        guard wakeFD >= 0 else { throw SocketError(operation: "eventfd", errno: errno) }
        _ = csystem_epoll_control(epoll, 1, wakeFD, csystem_epollin)
    }

    /// Starts the loop's thread; it registers `listener` and serves until drained.
    func start(listener: Int32, context: ServerContext) {
        let thread = Thread { [self] in
            let state = LoopState(loop: self, epoll: epoll, listener: listener, context: context)
            state.run()
            finished.store(true, ordering: .sequentiallyConsistent)
            stopped.signal()
        }
        thread.name = "linkout-loop-\(index)"
        thread.stackSize = 1 << 20
        thread.start()
    }

    // The descriptors are closed only here, when no Responder can reach this loop any more: closing them when the
    // thread ends would let a late `post` write into whatever file reused the number.
    deinit {
        Glibc.close(epoll)
        Glibc.close(wakeFD)
    }

    /// Queues a message and wakes the loop. Safe from any thread.
    func post(_ message: Message) {
        guard !finished.load(ordering: .sequentiallyConsistent) else { return }
        // Only the first message of a batch needs to wake the loop: it drains the whole mailbox once awake.
        let wasEmpty = mailbox.withLock { messages in
            defer { messages.append(message) }
            return messages.isEmpty
        }
        guard wasEmpty else { return }
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    func waitUntilStopped() {
        stopped.wait()
    }

    fileprivate func takeMessages() -> [Message] {
        var counter: UInt64 = 0
        _ = Glibc.read(wakeFD, &counter, 8)
        return mailbox.withLock { messages in
            defer { messages.removeAll(keepingCapacity: true) }
            return messages
        }
    }

    fileprivate var wakeDescriptor: Int32 { wakeFD }
}

/// The loop thread's own state; never leaves that thread.
private final class LoopState {
    let loop: EventLoop
    let epoll: Int32
    let listener: Int32
    let context: ServerContext
    let configuration: HTTPServer.Configuration
    var connections: [Connection?] = []
    var connectionCount = 0
    var nextID: UInt64 = 1
    var nextRequest: UInt64 = 0
    let requestIDPrefix: String
    var date = HTTPDate()
    var draining = false
    var drainDeadline: UInt64 = 0
    var nextSweep: UInt64 = 0
    let sweepInterval: UInt64
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    let maxBufferedInput: Int
    /// Above this much unwritten output, a connection parses no further pipelined requests until it drains.
    let outputHighWater = 1 << 20

    init(loop: EventLoop, epoll: Int32, listener: Int32, context: ServerContext) {
        self.loop = loop
        self.epoll = epoll
        self.listener = listener
        self.context = context
        self.configuration = context.configuration
        requestIDPrefix = context.requestIDPrefix + String(loop.index) + "-"
        let limits = configuration.limits
        maxBufferedInput = limits.maxRequestLineBytes + limits.maxHeaderBytes + limits.maxBodyBytes + 64 * 1024
        let shortest =
            [
                configuration.idleTimeout, configuration.requestHeadTimeout, configuration.requestBodyTimeout,
                configuration.writeTimeout,
            ].map(\.nanoseconds).min() ?? 1_000_000_000
        sweepInterval = max(10_000_000, min(250_000_000, shortest / 4))
    }

    deinit {
        readBuffer.deallocate()
    }

    func run() {
        _ = csystem_epoll_control(epoll, 1, listener, csystem_epollin)
        var fds = [Int32](repeating: 0, count: 256)
        var events = [UInt32](repeating: 0, count: 256)
        while true {
            let timeout = Int32(max(1, sweepInterval / 1_000_000))
            let count = csystem_epoll_wait(epoll, &fds, &events, 256, timeout)
            if count < 0 && errno != EINTR { break }
            for index in 0..<max(0, Int(count)) {
                let fd = fds[index]
                if fd == listener {
                    acceptConnections()
                } else if fd == loop.wakeDescriptor {
                    handleMessages()
                } else {
                    handleEvents(fd: fd, events: events[index])
                }
            }
            let now = monotonicNanoseconds()
            if now >= nextSweep {
                sweep(now: now)
                nextSweep = now + sweepInterval
            }
            if draining && (connectionCount == 0 || now >= drainDeadline) { break }
        }
        for case let connection? in connections { close(connection) }
    }

    // MARK: accepting

    func acceptConnections() {
        guard !draining else { return }
        for _ in 0..<128 {
            guard let fd = Socket.accept(listener) else { return }
            let open = context.openConnections.add(1, ordering: .relaxed).newValue
            if open > configuration.maxConnections {
                // Shed the excess without touching the connections already served.
                context.openConnections.subtract(1, ordering: .relaxed)
                context.shedConnections.add(1, ordering: .relaxed)
                ResponseSerializer.overloadResponse.withUnsafeBytes { _ = Socket.write(fd, $0) }
                Socket.close(fd)
                continue
            }
            let connection = Connection(
                fd: fd,
                id: nextID,
                remoteAddress: Socket.peerAddress(fd),
                now: monotonicNanoseconds()
            )
            nextID += 1
            if Int(fd) >= connections.count {
                connections.append(contentsOf: repeatElement(nil, count: Int(fd) + 1 - connections.count + 64))
            }
            connections[Int(fd)] = connection
            connectionCount += 1
            updateInterest(connection)
        }
    }

    // MARK: events

    func handleEvents(fd: Int32, events: UInt32) {
        guard Int(fd) < connections.count, let connection = connections[Int(fd)] else { return }
        // ERR or HUP: the peer can no longer receive anything (reset, or both directions shut down).
        if events & (csystem_epollerr | csystem_epollhup) != 0 {
            close(connection)
            return
        }
        if events & (csystem_epollin | csystem_epollrdhup) != 0 {
            readAvailable(connection)
            guard connections[Int(fd)] === connection else { return }
        }
        if events & csystem_epollout != 0 {
            flush(connection)
            guard connections[Int(fd)] === connection else { return }
            process(connection)
        }
    }

    func readAvailable(_ connection: Connection) {
        switch Socket.read(connection.fd, into: readBuffer) {
        case .bytes(let count):
            connection.lastActivity = monotonicNanoseconds()
            if connection.isLingering { return }
            connection.input.append(contentsOf: UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
        case .wouldBlock:
            return
        case .closed:
            connection.peerClosed = true
            if connection.isLingering {
                close(connection)
                return
            }
        }
        process(connection)
    }

    /// Parses and answers as many buffered requests as order and back-pressure allow, then writes.
    func process(_ connection: Connection) {
        parsing: while !connection.closeAfterWrite && !connection.isWaitingForHandler
            && connection.pendingOutputCount < outputHighWater
        {
            let pending = connection.pendingInput
            switch connection.phase {
            case .idle:
                guard !pending.isEmpty else { break parsing }
                connection.phase = .readingHead(since: monotonicNanoseconds())
            case .readingHead:
                switch context.parser.parseHead(pending) {
                case .incomplete:
                    break parsing
                case .invalid(let status):
                    reject(connection, status: status)
                case .head(let head, let headLength):
                    connection.phase = .readingBody(
                        head,
                        headLength: headLength,
                        since: monotonicNanoseconds(),
                        continueSent: false
                    )
                }
            case .readingBody(let head, let headLength, let since, let continueSent):
                let body = pending.dropFirst(headLength)
                switch BodyDecoder.decode(body, framing: head.framing, maxBodyBytes: configuration.limits.maxBodyBytes)
                {
                case .incomplete:
                    if head.expectsContinue && !continueSent {
                        connection.output.append(contentsOf: ResponseSerializer.continueResponse)
                        connection.phase = .readingBody(head, headLength: headLength, since: since, continueSent: true)
                    }
                    break parsing
                case .invalid(let status):
                    reject(connection, status: status)
                case .body(let bytes, let bodyLength):
                    connection.consumeInput(headLength + bodyLength)
                    dispatch(connection, head: head, body: bytes)
                }
            case .waitingForHandler, .lingering:
                break parsing
            }
        }
        if connection.peerClosed && !connection.isWaitingForHandler && !connection.hasPendingOutput {
            // The client sent EOF and everything it asked for is answered.
            close(connection)
            return
        }
        flush(connection)
    }

    func dispatch(_ connection: Connection, head: RequestParser.Head, body: [UInt8]) {
        let startedAt = monotonicNanoseconds()
        var request = HTTPRequest(method: head.method, target: head.target, version: head.version)
        request.headers = head.headers
        request.body = body
        request.remoteAddress = connection.remoteAddress
        request.id = requestID(offered: request.headers["x-request-id"])
        let keepAlive = request.keepAlive && !draining
        let omitBody = head.method == "HEAD"
        switch context.router.match(method: head.method, path: request.path) {
        case .notFound:
            write(
                HTTPError(.notFound, "Not found.").response,
                to: connection,
                request: request,
                startedAt: startedAt,
                keepAlive: keepAlive,
                omitBody: omitBody
            )
        case .methodNotAllowed(let allowed):
            let error = HTTPError(
                .methodNotAllowed,
                "Method not allowed.",
                headers: ["Allow": allowed.joined(separator: ", ")]
            )
            write(
                error.response,
                to: connection,
                request: request,
                startedAt: startedAt,
                keepAlive: keepAlive,
                omitBody: omitBody
            )
        case .route(let route, let parameters):
            request.pathParameters = parameters
            switch route.body {
            case .immediate(.eventLoop, let handler):
                let response = context.respond(handler, to: request)
                write(
                    response,
                    to: connection,
                    request: request,
                    startedAt: startedAt,
                    keepAlive: keepAlive,
                    omitBody: omitBody
                )
            case .immediate(.workerPool, let handler):
                connection.phase = .waitingForHandler(keepAlive: keepAlive, omitBody: omitBody)
                let responder = Responder(
                    loop: loop,
                    fd: connection.fd,
                    id: connection.id,
                    startedAt: startedAt,
                    request: request
                )
                let context = self.context
                let request = request
                context.workers.submit {
                    responder.respond(context.respond(handler, to: request))
                }
            case .deferred(let handler):
                connection.phase = .waitingForHandler(keepAlive: keepAlive, omitBody: omitBody)
                handler(
                    request,
                    Responder(loop: loop, fd: connection.fd, id: connection.id, startedAt: startedAt, request: request)
                )
            }
        }
    }

    func write(
        _ response: HTTPResponse,
        to connection: Connection,
        request: HTTPRequest,
        startedAt: UInt64,
        keepAlive: Bool,
        omitBody: Bool
    ) {
        ResponseSerializer.append(
            response,
            to: &connection.output,
            date: date.bytes(),
            keepAlive: keepAlive,
            omitBody: omitBody,
            requestID: request.id
        )
        connection.phase = .idle
        if !keepAlive { connection.closeAfterWrite = true }
        context.observer?(request, response.status, monotonicNanoseconds() &- startedAt)
    }

    /// The caller's `X-Request-Id` when it is a short, plain token (a proxy's id keeps logs joinable), else ours:
    /// a per-process random prefix, the loop and a counter.
    func requestID(offered: String?) -> String {
        if let offered, !offered.isEmpty, offered.utf8.count <= 64,
            offered.utf8.allSatisfy({ isTokenByte($0) })
        {
            return offered
        }
        nextRequest += 1
        return requestIDPrefix + String(nextRequest, radix: 36)
    }

    /// Answers a request the parser refused, then closes: after a framing error the byte stream cannot be trusted.
    func reject(_ connection: Connection, status: HTTPStatus) {
        let message: String
        switch status.code {
        case 408: message = "The request took too long to arrive."
        case 413: message = "The request body is too large."
        case 414: message = "The request line is too long."
        case 431: message = "The request headers are too large."
        case 505: message = "Only HTTP/1.0 and HTTP/1.1 are supported."
        default: message = "The request is malformed."
        }
        ResponseSerializer.append(
            HTTPError(status, message).response,
            to: &connection.output,
            date: date.bytes(),
            keepAlive: false,
            omitBody: false
        )
        connection.phase = .idle
        connection.closeAfterWrite = true
        let request = HTTPRequest(method: "-", target: "-")
        context.observer?(request, status, 0)
    }

    // MARK: writing

    func flush(_ connection: Connection) {
        while connection.hasPendingOutput {
            let written = connection.output.withUnsafeBytes { raw in
                Socket.write(connection.fd, UnsafeRawBufferPointer(rebasing: raw[connection.outputStart...]))
            }
            guard let written else {
                close(connection)
                return
            }
            if written == 0 { break }
            connection.consumeOutput(written)
            connection.lastActivity = monotonicNanoseconds()
        }
        if !connection.hasPendingOutput && connection.closeAfterWrite && !connection.isLingering {
            finishClosing(connection)
            return
        }
        updateInterest(connection)
    }

    /// After the last response: close at once when the client sent nothing more, else shut our side and drain.
    func finishClosing(_ connection: Connection) {
        if connection.peerClosed || connection.inputStart == connection.input.count && isReadDrained(connection) {
            close(connection)
            return
        }
        Socket.shutdownWrite(connection.fd)
        connection.input.removeAll()
        connection.inputStart = 0
        connection.phase = .lingering(until: monotonicNanoseconds() + 2_000_000_000)
        updateInterest(connection)
    }

    /// Whether the socket has nothing unread right now (so closing it will not send a reset).
    func isReadDrained(_ connection: Connection) -> Bool {
        var pollDescriptor = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
        return poll(&pollDescriptor, 1, 0) == 0
    }

    func updateInterest(_ connection: Connection) {
        var wanted: UInt32 = 0
        let wantsRead =
            !connection.peerClosed
            && (connection.isLingering || connection.input.count - connection.inputStart < maxBufferedInput)
        if wantsRead { wanted |= csystem_epollin | csystem_epollrdhup }
        if connection.hasPendingOutput { wanted |= csystem_epollout }
        if connection.isRegistered && wanted == connection.registeredEvents { return }
        _ = csystem_epoll_control(epoll, connection.isRegistered ? 3 : 1, connection.fd, wanted)
        connection.registeredEvents = wanted
        connection.isRegistered = true
    }

    func close(_ connection: Connection) {
        guard Int(connection.fd) < connections.count, connections[Int(connection.fd)] === connection else { return }
        connections[Int(connection.fd)] = nil
        connectionCount -= 1
        context.openConnections.subtract(1, ordering: .relaxed)
        // Closing the descriptor also removes it from the epoll set.
        Socket.close(connection.fd)
    }

    // MARK: messages and timers

    func handleMessages() {
        for message in loop.takeMessages() {
            switch message {
            case .completed(let fd, let id, let response, let startedAt, let request):
                guard Int(fd) < connections.count, let connection = connections[Int(fd)], connection.id == id,
                    case .waitingForHandler(let keepAlive, let omitBody) = connection.phase
                else { continue }
                write(
                    response,
                    to: connection,
                    request: request,
                    startedAt: startedAt,
                    keepAlive: keepAlive && !draining,
                    omitBody: omitBody
                )
                process(connection)
            case .drain(let deadline):
                draining = true
                drainDeadline = deadline
                _ = csystem_epoll_control(epoll, 2, listener, 0)
                for case let connection? in connections where connection.isQuiescent {
                    close(connection)
                }
            }
        }
    }

    func sweep(now: UInt64) {
        for case let connection? in connections {
            switch connection.phase {
            case .idle:
                if draining && connection.isQuiescent {
                    close(connection)
                } else if connection.hasPendingOutput {
                    if now &- connection.lastActivity > configuration.writeTimeout.nanoseconds { close(connection) }
                } else if now &- connection.lastActivity > configuration.idleTimeout.nanoseconds {
                    close(connection)
                }
            case .readingHead(let since):
                if now &- since > configuration.requestHeadTimeout.nanoseconds { timeOut(connection) }
            case .readingBody(_, _, let since, _):
                if now &- since > configuration.requestBodyTimeout.nanoseconds { timeOut(connection) }
            case .waitingForHandler:
                break
            case .lingering(let until):
                if now >= until { close(connection) }
            }
        }
    }

    func timeOut(_ connection: Connection) {
        connection.input.removeAll()
        connection.inputStart = 0
        reject(connection, status: .requestTimeout)
        flush(connection)
    }
}
