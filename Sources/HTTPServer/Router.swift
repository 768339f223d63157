/// Maps a method and a path to a handler. Patterns are literal segments, `{name}` segments (one segment,
/// percent-decoded into `pathParameters`) and a final `{name...}` that captures the rest of the path undecoded.
public struct Router: Sendable {
    /// Where a handler runs. Handlers that never block (in-memory work) run on the event loop; anything that may
    /// block (disk writes, SQLite, libcurl) runs on the bounded worker pool so idle sockets never wait on it. A
    /// handler that waits on another service's answer (a payment provider's API, for seconds when it is slow)
    /// runs on a pool of its own: a slow service then holds only those threads, while pages, webhooks, the
    /// admin and the readiness probe keep the shared pool. `busy` answers instead, on the shared pool, a request
    /// that would wait too long for one of those threads (`ServerContext.outboundAdmission`) or that the server,
    /// stopping, will not start: the other service is slow for everyone, and its page with a retry button now is
    /// better than an answer minutes later.
    public enum Execution: Sendable {
        case eventLoop
        case workerPool
        case outbound(busy: Handler)
    }

    public typealias Handler = @Sendable (HTTPRequest) throws -> HTTPResponse

    /// A handler that answers later: it runs on the event loop, must not block, and hands its work to another
    /// thread (for example the ledger's group-commit writer), which calls the `Responder` exactly once.
    public typealias DeferredHandler = @Sendable (HTTPRequest, Responder) -> Void

    enum Body: Sendable {
        case immediate(Execution, Handler)
        case deferred(DeferredHandler)
    }

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        case remainder(String)
    }

    struct Route: Sendable {
        var method: String
        /// The pattern as registered (`/checkout/{id}`): a bounded name for logs, unlike the path it matched.
        var pattern: String
        var segments: [Segment]
        var body: Body
        /// The largest request body the route takes, checked when the head arrives.
        var bodyLimit: BodyLimit
    }

    enum Match {
        case route(Route, parameters: [String: String])
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    private var routes: [Route] = []
    /// Which routes can match a path, by its first segment (in the order they were added): a request tries the
    /// one or two routes that start with its first segment instead of every route in the table.
    private var routesByFirstSegment: [Substring: [Int]] = [:]
    /// Routes whose first segment is a parameter: they can match any path, so every lookup tries them too.
    private var routesOpenAtFirstSegment: [Int] = []

    /// How the server words its own refusals for a request (`Router+Refusals.swift`); nil for plain text.
    public var refusalStyle: RefusalStyle?

    public init() {}

    /// A route as added: its method and pattern (`/checkout/{id}`).
    public struct Registration: Sendable, Hashable {
        public var method: String
        public var pattern: String
    }

    /// Every route added, in the order added: what the server answers, for comparisons such as the API document's
    /// drift test. `HEAD` routes that fall back to `GET` are not listed.
    public var registrations: [Registration] {
        routes.map { Registration(method: $0.method, pattern: $0.pattern) }
    }

    /// Adds a route. `HEAD` is answered by the `GET` route of the same path unless one is added for it.
    /// `bodyLimit` defaults to none for `GET` and `HEAD` (a body there has no meaning, RFC 9110 §9.3.1) and to the
    /// server's `maxBodyBytes` for other methods.
    public mutating func add(
        _ method: String,
        _ pattern: String,
        execution: Execution = .workerPool,
        bodyLimit: BodyLimit? = nil,
        handler: @escaping Handler
    ) {
        append(method, pattern, .immediate(execution, handler), bodyLimit)
    }

    /// Adds a route whose handler answers through a `Responder` (see `DeferredHandler`).
    public mutating func addDeferred(
        _ method: String,
        _ pattern: String,
        bodyLimit: BodyLimit? = nil,
        handler: @escaping DeferredHandler
    ) {
        append(method, pattern, .deferred(handler), bodyLimit)
    }

    private mutating func append(_ method: String, _ pattern: String, _ body: Body, _ bodyLimit: BodyLimit?) {
        let segments: [Segment] = Self.split(Substring(pattern)).map { part in
            if part.hasPrefix("{") && part.hasSuffix("...}") {
                return .remainder(String(part.dropFirst().dropLast(4)))
            }
            if part.hasPrefix("{") && part.hasSuffix("}") {
                return .parameter(String(part.dropFirst().dropLast()))
            }
            return .literal(String(part))
        }
        if case .literal(let first) = segments.first {
            routesByFirstSegment[Substring(first), default: []].append(routes.count)
        } else {
            routesOpenAtFirstSegment.append(routes.count)
        }
        let limit = bodyLimit ?? (method == "GET" || method == "HEAD" ? .noBody : .serverLimit)
        routes.append(Route(method: method, pattern: pattern, segments: segments, body: body, bodyLimit: limit))
    }

    /// The routes that may match `parts`, in the order they were added.
    private func candidates(_ parts: [Substring]) -> [Int] {
        let literal = parts.first.flatMap { routesByFirstSegment[$0] } ?? []
        if routesOpenAtFirstSegment.isEmpty { return literal }
        return (literal + routesOpenAtFirstSegment).sorted()
    }

    /// Adds a `GET` route; it takes no body unless `bodyLimit` says otherwise.
    public mutating func get(
        _ pattern: String,
        execution: Execution = .workerPool,
        bodyLimit: BodyLimit = .noBody,
        handler: @escaping Handler
    ) {
        add("GET", pattern, execution: execution, bodyLimit: bodyLimit, handler: handler)
    }

    /// Adds a `POST` route; its body may be as large as `bodyLimit` (default: the server's `maxBodyBytes`).
    public mutating func post(
        _ pattern: String,
        execution: Execution = .workerPool,
        bodyLimit: BodyLimit = .serverLimit,
        handler: @escaping Handler
    ) {
        add("POST", pattern, execution: execution, bodyLimit: bodyLimit, handler: handler)
    }

    func match(method: String, path: Substring) -> Match {
        let parts = Self.split(path)
        var allowed: [String] = []
        var headFallback: (Route, [String: String])?
        for index in candidates(parts) {
            let route = routes[index]
            guard let parameters = Self.match(route.segments, parts) else { continue }
            if route.method == method { return .route(route, parameters: parameters) }
            if method == "HEAD" && route.method == "GET" && headFallback == nil { headFallback = (route, parameters) }
            allowed.append(route.method)
        }
        if let (route, parameters) = headFallback { return .route(route, parameters: parameters) }
        if allowed.isEmpty { return .notFound }
        if allowed.contains("GET") && !allowed.contains("HEAD") { allowed.append("HEAD") }
        return .methodNotAllowed(allowed: allowed)
    }

    private static func split(_ path: Substring) -> [Substring] {
        path.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map {
            Substring($0)
        }
    }

    private static func match(_ segments: [Segment], _ parts: [Substring]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (index, segment) in segments.enumerated() {
            switch segment {
            case .remainder(let name):
                guard index < parts.count else { return nil }
                parameters[name] = parts[index...].joined(separator: "/")
                return parameters
            case .literal(let literal):
                guard index < parts.count, parts[index] == literal else { return nil }
            case .parameter(let name):
                guard index < parts.count, !parts[index].isEmpty,
                    let value = FormDecoding.decodePathSegment(parts[index])
                else { return nil }
                parameters[name] = value
            }
        }
        return parts.count == segments.count ? parameters : nil
    }
}
