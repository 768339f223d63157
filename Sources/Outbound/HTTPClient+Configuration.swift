extension HTTPClient {
    /// How outbound requests are made. Every field has a default fit for calling Apple's API.
    public struct Configuration: Sendable {
        /// Time allowed to establish a connection (TCP and TLS). Default 3 s.
        public var connectTimeout: Duration = .seconds(3)
        /// Time allowed for a whole request, connection included. Default 15 s.
        public var totalTimeout: Duration = .seconds(15)
        /// A PEM file of CA certificates to trust instead of the system store (tests use a local test CA).
        /// TLS verification itself is always on.
        public var caFile: String?
        /// An outbound proxy, e.g. `http://proxy.internal:3128`.
        public var proxy: String?
        /// Easy handles kept for reuse, so TLS connections to the same host stay warm. Default 4.
        public var poolSize = 4
        /// Most bytes of a response body taken; a longer one fails the request. An answer is held in memory whole,
        /// and no upstream (a misbehaving proxy, a compromised endpoint) may make the server take unbounded
        /// memory. Default 8 MiB: the largest legitimate answers (a page of Apple's notification history, a
        /// provider's object) are a few hundred KB.
        public var maxResponseBytes = 8 << 20
        /// The caller reads only the status and headers (a webhook delivery): no body is taken, and the transfer
        /// ends at the body's first byte, so no answer's size can fail a request that was received.
        public var readsStatusOnly = false

        public init() {}
    }
}

extension Duration {
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
