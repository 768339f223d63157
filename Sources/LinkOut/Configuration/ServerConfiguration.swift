import Foundation
import HTTPServer

extension Configuration {
    /// `server` section.
    package struct Server: Sendable {
        /// Bind address. Default `0.0.0.0`.
        package var host = "0.0.0.0"
        /// Bind port; 0 picks a free one. Default 8080.
        package var port = 8080
        /// The public base URL people reach the server at (used for absolute links and the Secure cookie flag).
        package var publicURL = "http://localhost:8080"
        /// Addresses of reverse proxies whose `X-Forwarded-For` is believed.
        package var trustedProxies: [String] = []
        /// Folder of templates, styles and images served under `/static/`. Default `Public`.
        package var publicDir = "Public"
        /// Most connections served at once (503 above). Default 10,000.
        package var maxConnections = 10_000
        /// Connections one peer address may hold at once (503 and close above it). The HTTP core sees the socket's
        /// peer, so behind a reverse proxy every client shares the proxy's address and this caps the proxy; many
        /// phones behind one carrier NAT share an address too, hence the generous default. Default 256.
        package var maxConnectionsPerClient = 256
        /// Seconds a new connection may stay silent before its first byte; then it is closed without an answer,
        /// so connections opened only to hold a slot are soon given back. Default 10.
        package var firstByteTimeoutSeconds = 10
        /// Threads for blocking handlers. Default 16.
        package var workerThreads = 16
        /// Largest request body accepted (413 above). Default 1 MiB.
        package var maxBodyBytes = 1024 * 1024
        /// Keep-alive idle timeout in seconds. Default 60.
        package var idleTimeoutSeconds = 60
        /// Seconds a client may take to send its request headers (408 after). Default 10.
        package var requestHeadTimeoutSeconds = 10
        /// Seconds in-flight requests get to finish after SIGTERM. Default 10.
        package var shutdownGraceSeconds = 10
        /// Landing and API requests per second per client, sustained (`LINKOUT_RATE_LIMIT_PER_SECOND`); 0 turns
        /// the limit off. Default 10.
        package var rateLimitPerSecond = 10
        /// Requests a client may make at once before the sustained rate applies. Default 40.
        package var rateLimitBurst = 40

        package init() {}

        /// Whether people reach the server over https (Secure cookies, HSTS).
        package var isSecure: Bool { publicURL.hasPrefix("https:") }

        /// `publicURL` without a trailing slash, for building absolute links.
        package var baseURL: String { publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL }

        static func read(_ section: JSONFields) throws(ConfigurationError) -> Server {
            try section.rejectUnknownKeys([
                "host", "port", "publicURL", "trustedProxies", "publicDir", "maxConnections",
                "maxConnectionsPerClient", "firstByteTimeoutSeconds", "workerThreads", "maxBodyBytes",
                "idleTimeoutSeconds", "requestHeadTimeoutSeconds", "shutdownGraceSeconds",
                "rateLimitPerSecond", "rateLimitBurst",
            ])
            var server = Server()
            server.rateLimitPerSecond = try section.int(
                "rateLimitPerSecond",
                default: server.rateLimitPerSecond,
                range: 0...1_000_000
            )
            server.rateLimitBurst = try section.int(
                "rateLimitBurst",
                default: server.rateLimitBurst,
                range: 1...1_000_000
            )
            server.host = try section.string("host", default: server.host)
            server.port = try section.int("port", default: server.port, range: 0...65535)
            server.publicURL = try section.string("publicURL", default: server.publicURL)
            try Configuration.requireHTTPURL(server.publicURL, field: "server.publicURL")
            // The base of every link linkout hands out (pages, the provider's return URLs): a user or password in
            // it would travel with each, and a query or fragment would break the paths joined to it.
            if let parts = URLComponents(string: server.publicURL),
                parts.user != nil || parts.password != nil || parts.query != nil || parts.fragment != nil
            {
                throw ConfigurationError(
                    field: "server.publicURL",
                    problem: "must not carry a user, a password, a query or a fragment"
                )
            }
            // linkout serves its routes at the root, and its pages link to them from there (`/checkout/…`): a path
            // went into the provider's return URLs only, and a person who had paid came back to a 404.
            if let path = URLComponents(string: server.publicURL)?.path, !path.isEmpty, path != "/" {
                throw ConfigurationError(
                    field: "server.publicURL",
                    problem: "must be the origin alone (such as https://pay.example.com), without the path \(path): "
                        + "linkout serves its routes at the root"
                )
            }
            // Each is compared with a connection's peer address, so it is written as the server writes those
            // (`PeerAddress`); anything but an address would never match, and a proxy meant to be trusted would
            // silently not be.
            server.trustedProxies = try section.strings("trustedProxies").enumerated().map {
                (index, proxy) throws(ConfigurationError) in
                guard let canonical = PeerAddress.canonical(proxy) else {
                    throw ConfigurationError(
                        field: "server.trustedProxies[\(index)]",
                        problem: "must be an IP address (no port, range or name)"
                    )
                }
                return canonical
            }
            server.publicDir = try section.string("publicDir", default: server.publicDir)
            server.maxConnections = try section.int(
                "maxConnections",
                default: server.maxConnections,
                range: 1...1_000_000
            )
            server.maxConnectionsPerClient = try section.int(
                "maxConnectionsPerClient",
                default: server.maxConnectionsPerClient,
                range: 1...1_000_000
            )
            server.firstByteTimeoutSeconds = try section.int(
                "firstByteTimeoutSeconds",
                default: server.firstByteTimeoutSeconds,
                range: 1...600
            )
            server.workerThreads = try section.int("workerThreads", default: server.workerThreads, range: 1...1024)
            server.maxBodyBytes = try section.int(
                "maxBodyBytes",
                default: server.maxBodyBytes,
                range: 1024...(64 << 20)
            )
            server.idleTimeoutSeconds = try section.int(
                "idleTimeoutSeconds",
                default: server.idleTimeoutSeconds,
                range: 1...3600
            )
            server.requestHeadTimeoutSeconds = try section.int(
                "requestHeadTimeoutSeconds",
                default: server.requestHeadTimeoutSeconds,
                range: 1...600
            )
            server.shutdownGraceSeconds = try section.int(
                "shutdownGraceSeconds",
                default: server.shutdownGraceSeconds,
                range: 0...600
            )
            return server
        }
    }
}
