/// One connection's HTTP/1.1 life as a value: bytes and events go in, actions come out, and no system call is made.
/// The event loop owns the socket; it feeds this machine what the socket did and performs what `nextAction` asks
/// for, until the answer is `.wait`. Time is passed in as monotonic nanoseconds, so every timeout is testable.
///
/// Requests are answered strictly in order: after `.dispatch` nothing more is parsed until `respond` is called.
struct ConnectionStateMachine {
    /// The limits and timeouts the machine enforces (all durations in nanoseconds).
    struct Settings {
        var parser: RequestParser
        var idleTimeout: UInt64
        /// How long a new connection may stay silent; then it is closed without an answer.
        var firstByteTimeout: UInt64
        var requestHeadTimeout: UInt64
        var requestBodyTimeout: UInt64
        var writeTimeout: UInt64
        /// How long unread input is drained after the last response before the socket is closed anyway.
        var lingerTimeout: UInt64 = 2_000_000_000
        /// What the route of a request with a body takes, asked when its head arrives (see `BodyAdmission`).
        var admission: @Sendable (HTTPRequest) -> BodyAdmission
        /// Above this much unwritten output no further pipelined request is parsed until the socket drains.
        /// Small, because every connection may hold this much: a client that pipelines and never reads must not
        /// make thousands of connections cost gigabytes (1 MiB each did).
        var outputHighWater = 256 * 1024
        /// Input is read only up to the largest request head and a little more: a body is taken out of it as it
        /// arrives, and pipelined requests wait in the client's socket, not in our memory (a megabyte of them per
        /// connection, times thousands of connections, was gigabytes).
        var maxBufferedInput: Int
        /// Requests dispatched per turn (see `beginTurn`) before the machine yields to other connections, so one
        /// client's deep pipeline cannot keep a loop from everyone else: small enough that a loop with many
        /// flooding connections still comes back to new ones quickly, large enough to batch a pipeline's writes.
        var requestsPerTurn = 32

        init(configuration: HTTPServer.Configuration, router: Router) {
            let limits = configuration.limits
            admission = { [router] request in router.admission(for: request, serverLimit: limits.maxBodyBytes) }
            parser = RequestParser(limits: limits)
            idleTimeout = configuration.idleTimeout.nanoseconds
            firstByteTimeout = configuration.firstByteTimeout.nanoseconds
            requestHeadTimeout = configuration.requestHeadTimeout.nanoseconds
            requestBodyTimeout = configuration.requestBodyTimeout.nanoseconds
            writeTimeout = configuration.writeTimeout.nanoseconds
            maxBufferedInput = limits.maxRequestLineBytes + limits.maxHeaderBytes + 64 * 1024
        }
    }

    /// Where the connection is in its request/response cycle.
    enum Phase {
        /// Between requests, nothing of the next one parsed yet.
        case idle
        /// Part of a request head has arrived (at `since`).
        case readingHead(since: UInt64)
        /// The head is parsed (at `since`) and its route takes the body, which is read into `incoming`.
        case readingBody(since: UInt64)
        /// A request was dispatched; nothing more is parsed until its response is given (keeps order).
        case waitingForHandler(keepAlive: Bool, omitBody: Bool)
        /// The last response is written and our side shut down; unread input is drained until `until` so the kernel
        /// does not answer it with a reset that would destroy the response before the client reads it.
        case lingering(until: UInt64)
        /// Finished; the socket is to be closed.
        case closed
    }

    /// What the event loop must do next.
    enum Action {
        /// A complete request: route it and give its response to `respond`. Method, target, version, headers and
        /// body are filled in; the peer address and id are the loop's to add.
        case dispatch(HTTPRequest)
        /// The request's route refused it when its head arrived (no route 404, not this method 405, a declared
        /// body over the route's limit 413), or its chunked body passed that limit. Give `response` to `respond` as
        /// a handler's; the connection closes after it, since the rest of the body is never read.
        case refuse(HTTPRequest, HTTPResponse)
        /// The request was refused (malformed, too large, too slow); its answer is queued and the connection
        /// closes after it.
        case rejected(HTTPStatus)
        /// Write `pendingOutput` and report what the socket took with `wrote(_:now:)`.
        case write
        /// Shut down our sending side; keep reading (input is discarded) until the peer closes or the linger ends.
        case shutdownWrite
        /// Every response is written and the connection is done: close it when the socket holds no unread byte,
        /// else call `linger(now:)` so the client still gets to read the last response.
        case closeUnlessUnread
        /// Close the socket now.
        case close
        /// This turn's budget is spent while buffered requests wait: continue on a later turn, after others.
        case yield
        /// Nothing to do until the socket or a handler reports something; see `wantsRead` and `wantsWrite`.
        case wait
    }

    /// A request whose body is being read: the head as a request without body, what its route takes, the body so
    /// far. Kept out of `phase` so the body grows in place instead of being copied out of an enum each time.
    private struct IncomingBody {
        var request: HTTPRequest
        var reader: BodyReader
        var limit: BodyLimit
        var expectsContinue: Bool
        var continueSent = false
    }

    let settings: Settings
    private(set) var phase: Phase = .idle
    private var incoming: IncomingBody?
    private var input: [UInt8] = []
    private var inputStart = 0
    private var output: [UInt8] = []
    private var outputStart = 0
    /// Close once `output` is written (Connection: close, an error, or a graceful stop).
    private var closeAfterWrite = false
    /// Whether the client has sent anything yet.
    private var hasReceivedBytes = false
    /// The client sent EOF: nothing more will arrive.
    private(set) var peerClosed = false
    /// False after the socket took less than offered, until it reports writable again.
    private var socketWritable = true
    /// The server is stopping: no response keeps the connection open, an idle connection closes.
    private var draining = false
    private var shutdownPending = false
    /// A refusal queued but not yet told to the loop (which reports it to the observer).
    private var unreportedRejection: HTTPStatus?
    private var dispatchedThisTurn = 0
    private var turnBudget = Int.max
    /// When bytes last moved in either direction.
    private(set) var lastActivity: UInt64

    init(settings: Settings, now: UInt64) {
        self.settings = settings
        lastActivity = now
    }

    // MARK: state the loop reads

    var hasPendingOutput: Bool { outputStart < output.count }

    /// Whether the loop should watch the socket for input.
    var wantsRead: Bool {
        guard !peerClosed else { return false }
        if case .lingering = phase { return true }
        return input.count - inputStart < settings.maxBufferedInput
    }

    /// Whether the loop should watch the socket for room to write.
    var wantsWrite: Bool { hasPendingOutput }

    /// Nothing in progress: no partial request, no handler running, nothing left to write.
    var isQuiescent: Bool {
        if case .idle = phase { return inputStart == input.count && !hasPendingOutput }
        return false
    }

    /// Calls `body` with the bytes waiting to be written.
    func withPendingOutput<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        output.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[outputStart...])) }
    }

    // MARK: events

    /// Bytes arrived from the client.
    mutating func received(_ bytes: UnsafeRawBufferPointer, now: UInt64) {
        lastActivity = now
        hasReceivedBytes = true
        if case .lingering = phase { return }
        input.append(contentsOf: bytes)
    }

    /// The client closed its sending side (or the connection is gone).
    mutating func receivedEndOfStream() {
        peerClosed = true
    }

    /// The socket took `count` bytes of `pendingOutput`.
    mutating func wrote(_ count: Int, now: UInt64) {
        if count > 0 { lastActivity = now }
        if count < output.count - outputStart { socketWritable = false }
        outputStart += count
        if outputStart == output.count {
            output.removeAll(keepingCapacity: output.capacity <= 256 * 1024)
            outputStart = 0
        }
    }

    /// The socket has room to write again.
    mutating func becameWritable() {
        socketWritable = true
    }

    /// A new turn of the event loop: the per-turn budget starts again, at most `budget` requests (the loop
    /// lowers it when many connections are busy, so a turn over all of them stays short).
    mutating func beginTurn(budget: Int = .max) {
        dispatchedThisTurn = 0
        turnBudget = max(1, min(settings.requestsPerTurn, budget))
    }

    /// The response to the dispatched request. Returns false (and ignores it) when no request is waiting for one.
    @discardableResult
    mutating func respond(_ response: HTTPResponse, requestID: String, date: [UInt8]) -> Bool {
        guard case .waitingForHandler(let keepAlive, let omitBody) = phase else { return false }
        let keepOpen = keepAlive && !draining
        ResponseSerializer.append(
            response,
            to: &output,
            date: date,
            keepAlive: keepOpen,
            omitBody: omitBody,
            requestID: requestID
        )
        phase = .idle
        if !keepOpen { closeAfterWrite = true }
        return true
    }

    /// The server is stopping: finish what is in progress, keep nothing open afterwards.
    mutating func drain() {
        draining = true
        if isQuiescent { phase = .closed }
    }

    /// The socket still held unread bytes when the connection was to close: drain them for a while first.
    mutating func linger(now: UInt64) {
        input.removeAll()
        inputStart = 0
        incoming = nil
        phase = .lingering(until: now + settings.lingerTimeout)
        shutdownPending = true
    }

    /// Applies every timeout due at `now`. Returns true when one fired and `nextAction` has work.
    mutating func timerFired(now: UInt64, date: [UInt8]) -> Bool {
        switch phase {
        case .idle:
            let expired: Bool
            if draining && isQuiescent {
                expired = true
            } else if hasPendingOutput {
                expired = now &- lastActivity > settings.writeTimeout
            } else if !hasReceivedBytes {
                // A connection opened only to hold a slot is given back sooner than an idle keep-alive one.
                expired = now &- lastActivity > min(settings.firstByteTimeout, settings.idleTimeout)
            } else {
                expired = now &- lastActivity > settings.idleTimeout
            }
            if expired { phase = .closed }
            return expired
        case .readingHead(let since):
            return timeOut(now &- since > settings.requestHeadTimeout, date: date)
        case .readingBody(let since):
            return timeOut(now &- since > settings.requestBodyTimeout, date: date)
        case .waitingForHandler, .closed:
            return false
        case .lingering(let until):
            guard now >= until else { return false }
            phase = .closed
            return true
        }
    }

    /// A request that took too long to arrive gets 408; what did arrive of it is dropped.
    private mutating func timeOut(_ expired: Bool, date: [UInt8]) -> Bool {
        guard expired else { return false }
        input.removeAll()
        inputStart = 0
        incoming = nil
        reject(.requestTimeout, date: date)
        return true
    }

    // MARK: actions

    /// The next thing the loop must do. Call until it answers `.wait`, `.yield` or a close.
    mutating func nextAction(now: UInt64, date: [UInt8]) -> Action {
        switch phase {
        case .closed:
            return .close
        case .lingering:
            if shutdownPending {
                shutdownPending = false
                return .shutdownWrite
            }
            return peerClosed ? .close : .wait
        default:
            break
        }
        if let action = parse(now: now, date: date) { return action }
        if let status = unreportedRejection {
            unreportedRejection = nil
            return .rejected(status)
        }
        if hasPendingOutput && socketWritable { return .write }
        if !closeAfterWrite && !isWaitingForHandler && inputStart < input.count && !hasPendingOutput
            && dispatchedThisTurn >= min(turnBudget, settings.requestsPerTurn)
        {
            return .yield
        }
        if closeAfterWrite && !hasPendingOutput {
            if peerClosed { return close() }
            if inputStart < input.count {
                linger(now: now)
                return nextAction(now: now, date: date)
            }
            return .closeUnlessUnread
        }
        if peerClosed && !isWaitingForHandler && !hasPendingOutput {
            // The client sent EOF and everything it asked for is answered.
            return close()
        }
        return .wait
    }

    private mutating func close() -> Action {
        phase = .closed
        return .close
    }

    private var isWaitingForHandler: Bool {
        if case .waitingForHandler = phase { return true }
        return false
    }

    /// Advances the parser over buffered input; returns an action when a request is complete or refused.
    private mutating func parse(now: UInt64, date: [UInt8]) -> Action? {
        while !closeAfterWrite && output.count - outputStart < settings.outputHighWater
            && dispatchedThisTurn < min(turnBudget, settings.requestsPerTurn)
        {
            switch phase {
            case .idle:
                guard inputStart < input.count else { return nil }
                phase = .readingHead(since: now)
            case .readingHead:
                switch settings.parser.parseHead(input[inputStart...]) {
                case .incomplete:
                    return nil
                case .invalid(let status):
                    reject(status, date: date)
                case .head(let head, let headLength):
                    consumeInput(headLength)
                    if let action = begin(head, now: now) { return action }
                }
            case .readingBody:
                guard let (consumed, progress) = incoming?.reader.read(input[inputStart...]) else { return nil }
                consumeInput(consumed)
                switch progress {
                case .needsMore:
                    if incoming?.expectsContinue == true && incoming?.continueSent == false {
                        output.append(contentsOf: ResponseSerializer.continueResponse)
                        incoming?.continueSent = true
                    }
                    return nil
                case .invalid(let status) where status == .contentTooLarge:
                    guard let incoming else { return nil }
                    return refuse(incoming.request, incoming.limit.refusal(incoming.request))
                case .invalid(let status):
                    incoming = nil
                    reject(status, date: date)
                case .done:
                    guard var request = incoming?.request, let body = incoming?.reader.takeBody() else { return nil }
                    incoming = nil
                    request.body = body
                    return dispatch(request)
                }
            case .waitingForHandler, .lingering, .closed:
                return nil
            }
        }
        return nil
    }

    /// A head is in: a request without a body is dispatched; for one with a body its route is asked first, so a
    /// body nobody takes is refused before a byte of it is buffered (and without a 100 Continue).
    private mutating func begin(_ head: RequestParser.Head, now: UInt64) -> Action? {
        var request = HTTPRequest(method: head.method, target: head.target, version: head.version)
        request.headers = head.headers
        guard head.framing != .none else { return dispatch(request) }
        switch settings.admission(request) {
        case .refuse(let response):
            return refuse(request, response)
        case .read(let maxBytes, let limit):
            if case .length(let length) = head.framing, length > maxBytes {
                return refuse(request, limit.refusal(request))
            }
            incoming = IncomingBody(
                request: request,
                reader: BodyReader(framing: head.framing, maxBodyBytes: maxBytes),
                limit: limit,
                expectsContinue: head.expectsContinue
            )
            phase = .readingBody(since: now)
            return nil
        }
    }

    private mutating func dispatch(_ request: HTTPRequest) -> Action {
        phase = .waitingForHandler(keepAlive: request.keepAlive, omitBody: request.method == "HEAD")
        dispatchedThisTurn += 1
        return .dispatch(request)
    }

    /// Hands the loop a refusal to answer like a handler's response, and closes after it: what is left of the body
    /// is never read (lingering discards it).
    private mutating func refuse(_ request: HTTPRequest, _ response: HTTPResponse) -> Action {
        incoming = nil
        phase = .waitingForHandler(keepAlive: false, omitBody: request.method == "HEAD")
        dispatchedThisTurn += 1
        return .refuse(request, response)
    }

    /// Queues the answer to a refused request and closes after it: after a framing error the byte stream cannot be
    /// trusted, so nothing after it is read.
    private mutating func reject(_ status: HTTPStatus, date: [UInt8]) {
        ResponseSerializer.append(
            HTTPError(status, Self.rejectionMessage(status)).response,
            to: &output,
            date: date,
            keepAlive: false,
            omitBody: false
        )
        phase = .idle
        closeAfterWrite = true
        unreportedRejection = status
    }

    static func rejectionMessage(_ status: HTTPStatus) -> String {
        switch status.code {
        case 408: "The request took too long to arrive."
        case 413: "The request body is too large."
        case 414: "The request line is too long."
        case 431: "The request headers are too large."
        case 505: "Only HTTP/1.0 and HTTP/1.1 are supported."
        default: "The request is malformed."
        }
    }

    private mutating func consumeInput(_ count: Int) {
        inputStart += count
        if inputStart == input.count {
            // A buffer the size of a request head is kept for the next one; one that grew for a body's read or a
            // burst of pipelined requests is given back rather than held by a connection that may idle for long.
            input.removeAll(keepingCapacity: input.capacity <= 16 * 1024)
            inputStart = 0
        } else if input.capacity > 128 * 1024 && input.count - inputStart <= 16 * 1024 {
            // A burst grew the buffer and little of it is left: move that to a small one and give the memory back.
            input = Array(input[inputStart...])
            inputStart = 0
        } else if inputStart >= 64 * 1024 {
            input.removeFirst(inputStart)
            inputStart = 0
        }
    }
}
