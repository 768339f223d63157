import Logging
import Synchronization

/// One epoll set served by one thread: accepts from its listening socket, moves bytes between sockets and each
/// connection's `ConnectionStateMachine`, and carries out what the machines ask for. Handlers run inline or on the
/// worker pool (see `ServerContext.dispatch`). Idle connections cost a few hundred bytes and no thread.
///
/// Created and used only on its own thread; other threads reach it through its `LoopMailbox`.
final class EventLoop {
    private let epoll: Epoll
    private let mailbox: LoopMailbox
    private let listener: Int32
    private let context: ServerContext
    private let settings: ConnectionStateMachine.Settings
    /// Indexed by descriptor number.
    private var connections: [Connection?] = []
    private var connectionCount = 0
    private var nextID: UInt64 = 1
    private var nextRequest: UInt64 = 0
    private let requestIDPrefix: String
    private var date = HTTPDate()
    private var draining = false
    private var drainDeadline: UInt64 = 0
    private var nextSweep: UInt64 = 0
    private let sweepInterval: UInt64
    /// Events this loop took since its last sweep, and when that was: the heap is looked at only when every loop
    /// has been quiet for a while (`HeapTrimmer`).
    private var eventsSinceSweep = 0
    private var lastSweep: UInt64 = 0
    /// Connections that spent their turn's budget with requests still buffered, served again after the others.
    private var resumable: [Connection] = []
    /// Requests one connection may have dispatched in this turn (see `run`).
    private var turnBudget = Int.max
    /// About how many requests one turn of the loop serves, all busy connections together.
    static let requestsPerLoopTurn = 1024
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    /// Set while the listener is left out of the epoll set for want of descriptors, until the next sweep.
    private var listenerPaused = false

    init(index: Int, epoll: Epoll, mailbox: LoopMailbox, listener: Int32, context: ServerContext) {
        self.epoll = epoll
        self.mailbox = mailbox
        self.listener = listener
        self.context = context
        let configuration = context.configuration
        settings = ConnectionStateMachine.Settings(configuration: configuration, router: context.router)
        requestIDPrefix = context.requestIDPrefix + String(index) + "-"
        let shortest =
            [
                configuration.idleTimeout, configuration.firstByteTimeout, configuration.requestHeadTimeout,
                configuration.requestBodyTimeout, configuration.writeTimeout,
            ].map(\.nanoseconds).min() ?? 1_000_000_000
        sweepInterval = max(10_000_000, min(250_000_000, shortest / 4))
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Serves until drained, then closes every connection it still holds.
    func run() {
        epoll.add(listener, watching: .readable)
        epoll.add(mailbox.wake.descriptor, watching: .readable)
        var ready = Epoll.ReadyList()
        while true {
            // With connections waiting for another turn, only look for new events; do not sleep.
            let timeout = resumable.isEmpty ? Int32(max(1, sweepInterval / 1_000_000)) : 0
            guard epoll.wait(into: &ready, timeoutMilliseconds: timeout) else { break }
            // A turn serves every busy connection once; the more there are, the fewer requests each gets, so
            // the turn (and a newcomer's wait for the next one) stays short under a pipelined flood.
            turnBudget = max(2, Self.requestsPerLoopTurn / max(1, ready.count + resumable.count))
            eventsSinceSweep += ready.count
            // Newcomers first: accepting late in a long turn would make them wait a whole turn more.
            for index in 0..<ready.count where ready[index].0 == listener { acceptConnections() }
            for index in 0..<ready.count {
                let (fd, events) = ready[index]
                if fd == listener {
                    continue
                } else if fd == mailbox.wake.descriptor {
                    handleMessages()
                } else if Int(fd) < connections.count, let connection = connections[Int(fd)] {
                    handle(events, on: connection)
                }
            }
            resumeYielded()
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

    private func acceptConnections() {
        guard !draining else { return }
        for _ in 0..<128 {
            let fd: Int32
            switch context.descriptorShortage.accept(listener, now: monotonicNanoseconds()) {
            case .connection(let accepted): fd = accepted
            case .noneWaiting: return
            case .outOfResources(let error):
                cannotAccept(error)
                return
            }
            let open = context.openConnections.add(1, ordering: .relaxed).newValue
            let remoteAddress = Socket.peerAddress(fd)
            // Shed the excess (over the global cap, or over this address's share) without touching the
            // connections already served.
            guard open <= context.configuration.maxConnections, context.admitClient(remoteAddress) else {
                context.openConnections.subtract(1, ordering: .relaxed)
                context.shedConnections.add(1, ordering: .relaxed)
                ResponseSerializer.overloadResponse.withUnsafeBytes { _ = Socket.write(fd, $0) }
                Socket.close(fd)
                continue
            }
            let connection = Connection(
                fd: fd,
                id: nextID,
                remoteAddress: remoteAddress,
                machine: ConnectionStateMachine(
                    settings: settings,
                    now: monotonicNanoseconds(),
                    remoteAddress: remoteAddress
                )
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

    /// Out of descriptors (or memory), perhaps with connections waiting: they are answered 503 from the reserve
    /// while it lasts; without one, the listener is not watched until the next sweep, so the loop does not spin on
    /// it.
    private func cannotAccept(_ error: Int32) {
        var shed = 0
        let shortage = context.descriptorShortage
        let now = monotonicNanoseconds()
        answering: while shed < 128 {
            switch shortage.shed(from: listener, answering: ResponseSerializer.overloadResponse, now: now) {
            case .answered: shed += 1
            case .noneWaiting: break answering
            case .noReserve:
                epoll.modify(listener, watching: [])
                listenerPaused = true
                break answering
            }
        }
        context.shedConnections.add(shed, ordering: .relaxed)
        if shed > 0 || listenerPaused, let answered = shortage.warningDue(now: now) {
            context.logger.warning(
                "cannot accept connections: out of file descriptors or memory; new ones are answered 503",
                [
                    "error": "\(SocketError(operation: "accept", errno: error))", "answered_503": String(answered),
                    "open_connections": String(context.openConnections.load(ordering: .relaxed)),
                ]
            )
        }
    }

    // MARK: driving connections

    private func handle(_ events: Epoll.Events, on connection: Connection) {
        if !events.isDisjoint(with: [.error, .hangUp]) {
            // The peer can no longer receive anything (reset, or both directions shut down).
            close(connection)
            return
        }
        connection.machine.beginTurn(budget: turnBudget)
        if events.contains(.writable) { connection.machine.becameWritable() }
        if !events.isDisjoint(with: [.readable, .peerShutdown]) {
            switch Socket.read(connection.fd, into: readBuffer) {
            case .bytes(let count):
                connection.machine.received(
                    UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]),
                    now: monotonicNanoseconds()
                )
            case .wouldBlock:
                break
            case .closed:
                connection.machine.receivedEndOfStream()
            }
        }
        drive(connection)
    }

    /// Carries out the machine's actions until it waits, yields or is closed.
    private func drive(_ connection: Connection) {
        while true {
            let now = monotonicNanoseconds()
            switch connection.machine.nextAction(now: now, date: date.bytes()) {
            case .dispatch(let request):
                dispatch(request, on: connection, startedAt: now)
            case .refuse(var request, let response):
                request.remoteAddress = connection.remoteAddress
                request.id = requestID(offered: request.headers["x-request-id"], by: connection.remoteAddress)
                respond(response, on: connection, request: request, startedAt: now)
            case .rejected(let status):
                context.observer?(HTTPRequest(method: "-", target: "-"), status, 0)
            case .write:
                let written = connection.machine.withPendingOutput { Socket.write(connection.fd, $0) }
                guard let written else {
                    close(connection)
                    return
                }
                connection.machine.wrote(written, now: now)
            case .shutdownWrite:
                Socket.shutdownWrite(connection.fd)
            case .closeUnlessUnread:
                guard Socket.hasUnreadBytes(connection.fd) else {
                    close(connection)
                    return
                }
                connection.machine.linger(now: now)
            case .close:
                close(connection)
                return
            case .yield:
                if !connection.isResumable {
                    connection.isResumable = true
                    resumable.append(connection)
                }
                updateInterest(connection)
                return
            case .wait:
                updateInterest(connection)
                return
            }
        }
    }

    /// Gives each connection that yielded last turn another turn, in the order they yielded.
    private func resumeYielded() {
        guard !resumable.isEmpty else { return }
        let turn = resumable
        resumable.removeAll(keepingCapacity: true)
        for connection in turn {
            connection.isResumable = false
            guard Int(connection.fd) < connections.count, connections[Int(connection.fd)] === connection else {
                continue
            }
            connection.machine.beginTurn(budget: turnBudget)
            drive(connection)
        }
    }

    private func dispatch(_ request: HTTPRequest, on connection: Connection, startedAt: UInt64) {
        var request = request
        request.remoteAddress = connection.remoteAddress
        request.id = requestID(offered: request.headers["x-request-id"], by: connection.remoteAddress)
        let response = context.dispatch(&request) { request in
            // The responder carries the request back for the access log only: without its body, which is freed
            // when the handler is done instead of when the loop gets to the answer.
            var logged = request
            logged.body = []
            return Responder(
                mailbox: mailbox,
                fd: connection.fd,
                id: connection.id,
                startedAt: startedAt,
                request: logged
            )
        }
        if let response { respond(response, on: connection, request: request, startedAt: startedAt) }
    }

    private func respond(_ response: HTTPResponse, on connection: Connection, request: HTTPRequest, startedAt: UInt64) {
        guard connection.machine.respond(response, requestID: request.id, date: date.bytes()) else { return }
        context.observer?(request, response.status, monotonicNanoseconds() &- startedAt)
    }

    /// The id a request is logged and answered under: the `X-Request-Id` a trusted proxy sent (`requestIDPeers`)
    /// when it is a short, plain token (a proxy's id keeps logs joinable), else ours: a per-process random prefix,
    /// the loop and a counter.
    private func requestID(offered: String?, by peer: String) -> String {
        if let offered, !offered.isEmpty, offered.utf8.count <= 64, offered.utf8.allSatisfy({ isTokenByte($0) }),
            context.configuration.requestIDPeers.contains(peer)
        {
            return offered
        }
        nextRequest += 1
        return requestIDPrefix + String(nextRequest, radix: 36)
    }

    private func updateInterest(_ connection: Connection) {
        var wanted: Epoll.Events = []
        if connection.machine.wantsRead { wanted.formUnion([.readable, .peerShutdown]) }
        if connection.machine.wantsWrite { wanted.insert(.writable) }
        guard let registered = connection.registered else {
            epoll.add(connection.fd, watching: wanted)
            connection.registered = wanted
            return
        }
        guard registered != wanted else { return }
        epoll.modify(connection.fd, watching: wanted)
        connection.registered = wanted
    }

    private func close(_ connection: Connection) {
        guard Int(connection.fd) < connections.count, connections[Int(connection.fd)] === connection else { return }
        connections[Int(connection.fd)] = nil
        connectionCount -= 1
        context.openConnections.subtract(1, ordering: .relaxed)
        context.releaseClient(connection.remoteAddress)
        // Closing the descriptor also removes it from the epoll set.
        Socket.close(connection.fd)
        context.descriptorShortage.refill()
    }

    // MARK: messages and timers

    private func handleMessages() {
        for message in mailbox.take() {
            switch message {
            case .completed(let fd, let id, let response, let startedAt, let request):
                guard Int(fd) < connections.count, let connection = connections[Int(fd)], connection.id == id else {
                    continue
                }
                connection.machine.beginTurn()
                respond(response, on: connection, request: request, startedAt: startedAt)
                drive(connection)
            case .drain(let deadline):
                draining = true
                drainDeadline = deadline
                epoll.remove(listener)
                // New connections are refused from now on rather than left in the backlog unanswered until exit.
                Socket.stopListening(listener)
                let now = date.bytes()
                for case let connection? in connections {
                    // Bytes the kernel holds are read first: a request that began arriving is answered (503),
                    // not cut off with a reset.
                    if Socket.hasUnreadBytes(connection.fd) { handle([.readable], on: connection) }
                    guard Int(connection.fd) < connections.count, connections[Int(connection.fd)] === connection
                    else { continue }
                    connection.machine.drain(date: now)
                    drive(connection)
                }
            }
        }
    }

    private func sweep(now: UInt64) {
        if listenerPaused && !draining {
            // A descriptor another thread closed since may take the reserve back first.
            context.descriptorShortage.refill()
            epoll.modify(listener, watching: .readable)
            listenerPaused = false
        }
        let date = date.bytes()
        for case let connection? in connections where connection.machine.timerFired(now: now, date: date) {
            drive(connection)
        }
        context.heapTrimmer.noteSweep(events: eventsSinceSweep, elapsed: now &- lastSweep, now: now)
        context.heapTrimmer.trimIfDue(now: now)
        (eventsSinceSweep, lastSweep) = (0, now)
    }
}
