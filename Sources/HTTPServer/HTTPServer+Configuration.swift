#if canImport(Glibc)
import Glibc
#endif

extension HTTPServer {
    /// Everything the server core can be tuned with. Every field has a default suitable for production.
    public struct Configuration: Sendable {
        /// Address to bind: an IPv4 or IPv6 literal or a host name. Default `0.0.0.0`.
        public var host = "0.0.0.0"
        /// Port to bind; 0 asks the kernel for a free one (see `HTTPServer.port`). Default 8080.
        public var port = 8080
        /// Pending-connection queue length passed to listen(2). Default 1024.
        public var backlog: Int32 = 1024
        /// Event-loop threads, each with its own epoll set. Default: one per core.
        public var eventLoopCount = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        /// Threads for handlers that block (SQLite, libcurl). Default 16.
        public var workerThreads = 16
        /// Connections served at once; above it a new connection gets 503 and is closed, the open ones are not
        /// touched. Default 10,000.
        public var maxConnections = 10_000
        /// Connections one peer address may hold at once; above it a new connection from that address gets 503 and
        /// is closed. High enough for many phones behind one carrier NAT, low enough that one host cannot take
        /// every slot of `maxConnections`. Default 256.
        public var maxConnectionsPerClient = 256
        /// Size limits of the request parser (414, 431, 413).
        public var limits = RequestParser.Limits()
        /// How long a keep-alive connection may sit idle between requests. Default 60 s.
        public var idleTimeout: Duration = .seconds(60)
        /// How long a new connection may stay silent before its first byte; then it is closed without an answer.
        /// Shorter than `idleTimeout`, so connections opened only to hold a slot are soon given back. Default 10 s.
        public var firstByteTimeout: Duration = .seconds(10)
        /// How long a client may take from a request's first byte to the end of its headers; then 408. Default 10 s.
        public var requestHeadTimeout: Duration = .seconds(10)
        /// How long a client may take to send a request's body after its headers; then 408. Default 30 s.
        public var requestBodyTimeout: Duration = .seconds(30)
        /// How long a response may wait for the client to read it before the connection is dropped. Default 30 s.
        public var writeTimeout: Duration = .seconds(30)
        /// The peers (addresses as `PeerAddress` writes them: the trusted proxies) whose `X-Request-Id` a request
        /// keeps. Any other client's is replaced: it could copy another request's id, or a token's, into the
        /// access log and the support reference a person quotes.
        public var requestIDPeers: Set<String> = []

        public init() {}
    }
}

extension Duration {
    /// Whole nanoseconds, saturating; the event loops keep time in monotonic nanoseconds.
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}

/// Monotonic time in nanoseconds (CLOCK_MONOTONIC; unaffected by wall-clock changes).
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
