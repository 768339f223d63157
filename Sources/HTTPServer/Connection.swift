/// One client connection's state. Owned and touched only by its event loop's thread.
final class Connection {
    /// Where the connection is in its request/response cycle.
    enum Phase {
        /// Between requests, nothing of the next one received yet.
        case idle
        /// Part of a request head has arrived (at `since`).
        case readingHead(since: UInt64)
        /// The head is parsed; waiting for the body since `since`.
        case readingBody(RequestParser.Head, headLength: Int, since: UInt64, continueSent: Bool)
        /// A handler runs on the worker pool; nothing more is parsed until its response is written (keeps order).
        case waitingForHandler(keepAlive: Bool, omitBody: Bool)
        /// The last response is written and our side shut down; unread input is drained until `until` so the
        /// kernel does not answer it with a reset that would destroy the response before the client reads it.
        case lingering(until: UInt64)
    }

    let fd: Int32
    let id: UInt64
    let remoteAddress: String
    var phase: Phase = .idle
    var input: [UInt8] = []
    var inputStart = 0
    var output: [UInt8] = []
    var outputStart = 0
    /// Close once `output` is flushed (Connection: close, an error, or a graceful stop).
    var closeAfterWrite = false
    /// Close hard once `output` is flushed, skipping the lingering drain (the peer already sent EOF).
    var peerClosed = false
    var lastActivity: UInt64
    /// The epoll interest currently registered.
    var registeredEvents: UInt32 = 0
    var isRegistered = false

    init(fd: Int32, id: UInt64, remoteAddress: String, now: UInt64) {
        self.fd = fd
        self.id = id
        self.remoteAddress = remoteAddress
        self.lastActivity = now
    }

    var pendingInput: ArraySlice<UInt8> { input[inputStart...] }
    var hasPendingOutput: Bool { outputStart < output.count }
    var pendingOutputCount: Int { output.count - outputStart }

    var isWaitingForHandler: Bool {
        if case .waitingForHandler = phase { return true }
        return false
    }

    var isLingering: Bool {
        if case .lingering = phase { return true }
        return false
    }

    /// Nothing in progress: no partial request, no handler running, nothing left to write.
    var isQuiescent: Bool {
        if case .idle = phase { return inputStart == input.count && !hasPendingOutput }
        return false
    }

    func consumeInput(_ count: Int) {
        inputStart += count
        if inputStart == input.count {
            input.removeAll(keepingCapacity: input.capacity <= 64 * 1024)
            inputStart = 0
        } else if inputStart >= 64 * 1024 {
            input.removeFirst(inputStart)
            inputStart = 0
        }
    }

    func consumeOutput(_ count: Int) {
        outputStart += count
        if outputStart == output.count {
            output.removeAll(keepingCapacity: output.capacity <= 256 * 1024)
            outputStart = 0
        }
    }
}
