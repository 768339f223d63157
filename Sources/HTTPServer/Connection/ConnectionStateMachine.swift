/// One connection's HTTP/1.1 life as a value: bytes and events go in, actions come out, and no system call is made.
/// The event loop owns the socket; it feeds this machine what the socket did and performs what `nextAction` asks
/// for, until the answer is `.wait`. Time is passed in as monotonic nanoseconds, so every timeout is testable.
///
/// Requests are answered strictly in order: after `.dispatch` nothing more is parsed until `respond` is called.
///
/// What the connection is doing is `phase`, and each phase carries the state only it has (the body being read, a
/// refusal not yet reported, a shutdown still owed). The properties beside it are what every phase shares: the
/// buffered input and output, what the peer and the socket have said, the server's stop, and this turn's budget.
struct ConnectionStateMachine {
    let settings: Settings
    private(set) var phase: Phase = .idle(hasReceivedBytes: false)
    private var input = InputBuffer()
    private var output: [UInt8] = []
    private var outputStart = 0
    /// The client sent EOF: nothing more will arrive.
    private(set) var peerClosed = false
    /// False after the socket took less than offered, until it reports writable again.
    private var socketWritable = true
    /// The server is stopping: no response keeps the connection open, an idle connection closes.
    private var draining = false
    private var dispatchedThisTurn = 0
    private var turnBudget = Int.max
    /// When bytes last moved in either direction.
    private(set) var lastActivity: UInt64
    /// Since when the output has waited without the socket taking a byte of it (nil: none waits, or the last write
    /// took some). The write timeout reads this, not `lastActivity`: a client that sends a byte now and then while
    /// it never reads kept its unread answers, and its slot, for as long as it trickled.
    private var outputStalledSince: UInt64?

    /// The peer's address, on each request's head: a route's check of the head (`BodyLimit.admit`) counts
    /// failures by it.
    let remoteAddress: String

    init(settings: Settings, now: UInt64, remoteAddress: String = "") {
        self.settings = settings
        self.remoteAddress = remoteAddress
        lastActivity = now
    }

    // MARK: state the loop reads

    var hasPendingOutput: Bool { outputStart < output.count }

    /// Whether the loop should watch the socket for input.
    var wantsRead: Bool {
        guard !peerClosed else { return false }
        if case .lingering = phase { return true }
        return input.count < settings.maxBufferedInput
    }

    /// Whether the loop should watch the socket for room to write.
    var wantsWrite: Bool { hasPendingOutput }

    /// Nothing in progress: no partial request, no handler running, nothing left to write. A connection closing
    /// after its last response counts once that response is written.
    var isQuiescent: Bool {
        switch phase {
        case .idle, .closingAfterWrite: input.isEmpty && !hasPendingOutput
        default: false
        }
    }

    /// Calls `body` with the bytes waiting to be written.
    func withPendingOutput<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        output.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[outputStart...])) }
    }

    // MARK: events

    /// Bytes arrived from the client.
    mutating func received(_ bytes: UnsafeRawBufferPointer, now: UInt64) {
        lastActivity = now
        switch phase {
        case .lingering:
            return
        case .idle(hasReceivedBytes: false):
            phase = .idle(hasReceivedBytes: true)
        default:
            break
        }
        input.append(bytes)
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
            outputStalledSince = nil
        } else if count > 0 || outputStalledSince == nil {
            outputStalledSince = now
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
        phase = keepOpen ? .idle(hasReceivedBytes: true) : .closingAfterWrite(unreportedRejection: nil)
        return true
    }

    /// The server is stopping: finish what is in progress, keep nothing open afterwards. A request still arriving
    /// (its head or its body, now or in bytes read later) is not waited for: a client that sends slowly, or never
    /// finishes, would hold the stop until its timeout. It is answered 503 (nothing of it was acted on; the client
    /// may send it again elsewhere).
    mutating func drain(date: [UInt8]) {
        draining = true
        switch phase {
        case .readingHead, .readingBody: reject(.serviceUnavailable, date: date)
        case .idle where !input.isEmpty: break  // parsed next (`parse`), and refused there if incomplete
        default: if isQuiescent { phase = .closed }
        }
    }

    /// The socket still held unread bytes when the connection was to close: drain them for a while first.
    mutating func linger(now: UInt64) {
        input.removeAll()
        phase = .lingering(until: now + settings.lingerTimeout, shutdownPending: true)
    }

    /// Applies every timeout due at `now`. Returns true when one fired and `nextAction` has work.
    mutating func timerFired(now: UInt64, date: [UInt8]) -> Bool {
        switch phase {
        case .idle(let hasReceivedBytes):
            return closeIfIdleTooLong(now: now, hasReceivedBytes: hasReceivedBytes)
        case .closingAfterWrite:
            // Only a request leads here, so the client has sent bytes.
            return closeIfIdleTooLong(now: now, hasReceivedBytes: true)
        case .readingHead(let since, _):
            return timeOut(now &- since > settings.requestHeadTimeout, date: date)
        case .readingBody(let body):
            return timeOut(now &- body.since > settings.requestBodyTimeout, date: date)
        case .waitingForHandler, .closed:
            return false
        case .lingering(let until, _):
            guard now >= until else { return false }
            phase = .closed
            return true
        case .modifying:
            preconditionFailure("the phase is only .modifying within parse")
        }
    }

    /// Between requests: closed when the server stops, when output waits longer than the write timeout, or after
    /// the idle timeout (the first-byte timeout for a new connection that has sent nothing).
    private mutating func closeIfIdleTooLong(now: UInt64, hasReceivedBytes: Bool) -> Bool {
        let expired: Bool
        if draining && isQuiescent {
            expired = true
        } else if hasPendingOutput {
            expired = now &- (outputStalledSince ?? lastActivity) > settings.writeTimeout
        } else if !hasReceivedBytes {
            // A connection opened only to hold a slot is given back sooner than an idle keep-alive one.
            expired = now &- lastActivity > min(settings.firstByteTimeout, settings.idleTimeout)
        } else {
            expired = now &- lastActivity > settings.idleTimeout
        }
        if expired { phase = .closed }
        return expired
    }

    /// A request that took too long to arrive gets 408; what did arrive of it (a body read so far goes with the
    /// phase) is dropped.
    private mutating func timeOut(_ expired: Bool, date: [UInt8]) -> Bool {
        guard expired else { return false }
        input.removeAll()
        reject(.requestTimeout, date: date)
        return true
    }

    // MARK: actions

    /// The next thing the loop must do. Call until it answers `.wait`, `.yield` or a close.
    mutating func nextAction(now: UInt64, date: [UInt8]) -> Action {
        // Parsing first: it may dispatch a request, or refuse one and so start closing.
        if let action = parse(now: now, date: date) { return action }
        switch phase {
        case .idle, .readingHead, .readingBody, .waitingForHandler:
            if hasPendingOutput && socketWritable { return .write }
            let waitingForHandler = if case .waitingForHandler = phase { true } else { false }
            if !waitingForHandler && !input.isEmpty && !hasPendingOutput
                && dispatchedThisTurn >= min(turnBudget, settings.requestsPerTurn)
            {
                return .yield
            }
            if peerClosed && !waitingForHandler && !hasPendingOutput {
                if hasPartialRequest {
                    // The client closed its sending side part-way through a request (it may still read): it is
                    // told the request was cut short, as a client that waited is told it took too long.
                    input.removeAll()
                    reject(.badRequest, message: Self.cutShort, date: date)
                    return nextAction(now: now, date: date)
                }
                // The client sent EOF and everything it asked for is answered.
                return close()
            }
            return .wait
        case .closingAfterWrite(let unreportedRejection):
            // The refusal is reported first, then the output written; then the connection closes at once if the
            // client is gone, lingers if it sent more than was read, and otherwise closes unless the socket holds
            // bytes not yet read.
            if let status = unreportedRejection {
                phase = .closingAfterWrite(unreportedRejection: nil)
                return .rejected(status)
            }
            if hasPendingOutput { return socketWritable ? .write : .wait }
            if peerClosed { return close() }
            if !input.isEmpty {
                linger(now: now)
                return nextAction(now: now, date: date)
            }
            return .closeUnlessUnread
        case .lingering(let until, let shutdownPending):
            if shutdownPending {
                phase = .lingering(until: until, shutdownPending: false)
                return .shutdownWrite
            }
            return peerClosed ? .close : .wait
        case .closed:
            return .close
        case .modifying:
            preconditionFailure("the phase is only .modifying within parse")
        }
    }

    /// Whether part of a request has arrived and not all of it: its head, or its body.
    private var hasPartialRequest: Bool {
        switch phase {
        case .readingHead, .readingBody: true
        default: false
        }
    }

    /// What a request the client stopped sending part-way is answered with (400).
    static let cutShort = "The request ended before it was whole."

    private mutating func close() -> Action {
        phase = .closed
        return .close
    }

    /// Advances the parser over buffered input; returns an action when a request is complete or refused.
    private mutating func parse(now: UInt64, date: [UInt8]) -> Action? {
        while output.count - outputStart < settings.outputHighWater
            && dispatchedThisTurn < min(turnBudget, settings.requestsPerTurn)
        {
            switch phase {
            case .idle:
                guard !input.isEmpty else { return nil }
                phase = .readingHead(since: now, scan: HeadScan())
            case .readingHead(let since, var scan):
                let result = settings.parser.parseHead(input.unread, scan: &scan)
                phase = .readingHead(since: since, scan: scan)
                switch result {
                case .incomplete:
                    // Stopping: the rest of the head is not waited for (`drain`).
                    if draining { reject(.serviceUnavailable, date: date) } else { return nil }
                case .invalid(let status):
                    reject(status, date: date)
                case .head(let head, let headLength):
                    input.consume(headLength)
                    if let action = begin(head, now: now) { return action }
                }
            case .readingBody(var body):
                // Out of the phase while it grows, so this copy is the body buffer's only reference (see
                // `Phase.modifying`); every path below sets the phase again.
                phase = .modifying
                let (consumed, progress) = body.reader.read(input.unread)
                input.consume(consumed)
                switch progress {
                case .needsMore where draining:
                    phase = .readingBody(body)
                    reject(.serviceUnavailable, date: date)
                case .needsMore:
                    if body.expectsContinue && !body.continueSent {
                        output.append(contentsOf: ResponseSerializer.continueResponse)
                        body.continueSent = true
                    }
                    phase = .readingBody(body)
                    return nil
                case .invalid(let status) where status == .contentTooLarge:
                    return refuse(body.request, body.limit.refusal(body.request))
                case .invalid(let status):
                    reject(status, date: date)
                case .done:
                    var request = body.request
                    request.body = body.reader.takeBody()
                    return dispatch(request)
                }
            case .waitingForHandler, .closingAfterWrite, .lingering, .closed:
                return nil
            case .modifying:
                preconditionFailure("the phase is only .modifying within parse")
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
        request.remoteAddress = remoteAddress
        switch settings.admission(request) {
        case .refuse(let response):
            return refuse(request, response)
        case .read(let maxBytes, let limit):
            if case .length(let length) = head.framing, length > maxBytes {
                return refuse(request, limit.refusal(request))
            }
            phase = .readingBody(
                IncomingBody(
                    since: now,
                    request: request,
                    reader: BodyReader(framing: head.framing, maxBodyBytes: maxBytes),
                    limit: limit,
                    expectsContinue: head.expectsContinue
                )
            )
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
        phase = .waitingForHandler(keepAlive: false, omitBody: request.method == "HEAD")
        dispatchedThisTurn += 1
        return .refuse(request, response)
    }

    /// Queues the answer to a refused request and closes after it: after a framing error the byte stream cannot be
    /// trusted, so nothing after it is read.
    private mutating func reject(_ parsed: HTTPStatus, message: String? = nil, date: [UInt8]) {
        let (status, standard) = Self.rejection(parsed)
        let message = message ?? standard
        ResponseSerializer.append(
            HTTPError(status, message).response,
            to: &output,
            date: date,
            keepAlive: false,
            omitBody: false
        )
        phase = .closingAfterWrite(unreportedRejection: status)
    }
}
