extension ConnectionStateMachine {
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
}
