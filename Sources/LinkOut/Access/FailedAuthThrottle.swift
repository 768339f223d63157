import HTTPServer
import Lifecycle
import Synchronization

/// Slows down guessing of the admin and API bearer tokens: a client whose bearer token was refused
/// `maxFailures` times within `window` gets 429 with `Retry-After` on those routes, whatever it sends, until the
/// window that began with its first failure ends. Refusing the right token too while blocked is what makes the
/// limit bite: otherwise a guesser would still learn the moment it guessed right.
final class FailedAuthThrottle: Sendable {
    private struct Failures {
        var windowStart: Int64
        var count: Int
    }

    let maxFailures: Int
    let windowMilliseconds: Int64
    let trustedProxies: Set<String>
    private let clock: Clock
    private let failures = Mutex<[String: Failures]>([:])
    /// When a refused sign-in of each client last went in the audit log (`recordsInAudit`).
    private let audited = Mutex<[String: Int64]>([:])
    /// One refused sign-in of a client an hour goes in the audit log; the throttle counts them all. Each went in
    /// before: a guesser's ten a minute, for ever, grew a log nothing may shorten without bound.
    static let auditIntervalMilliseconds: Int64 = 3_600_000
    /// Above this many tracked clients, expired windows are dropped, so a spray of addresses cannot grow memory
    /// without bound.
    static let maxClients = 100_000

    init(maxFailures: Int = 10, window: Duration = .seconds(60), trustedProxies: Set<String>, clock: Clock) {
        self.maxFailures = max(1, maxFailures)
        windowMilliseconds = max(
            1,
            window.components.seconds * 1000 + window.components.attoseconds / 1_000_000_000_000_000
        )
        self.trustedProxies = trustedProxies
        self.clock = clock
    }

    /// Windows are spans, measured on the monotonic clock: on the wall clock, a clock stepped back an hour held a
    /// blocked client (the right token included) for the hour.
    private var elapsedMilliseconds: Int64 { Int64(clock.uptimeNanoseconds() / 1_000_000) }

    /// Seconds until `client` may try again, or nil when it is not blocked.
    func retryAfter(for client: String) -> Int? {
        let now = elapsedMilliseconds
        return failures.withLock { failures -> Int? in
            guard let entry = failures[client] else { return nil }
            let end = entry.windowStart + windowMilliseconds
            guard now < end else {
                failures[client] = nil
                return nil
            }
            guard entry.count >= maxFailures else { return nil }
            return Int(max(1, (end - now + 999) / 1000))
        }
    }

    /// Counts one refused bearer token for `client`.
    func recordFailure(for client: String) {
        let now = elapsedMilliseconds
        failures.withLock { failures in
            if var entry = failures[client], now < entry.windowStart + windowMilliseconds {
                entry.count += 1
                failures[client] = entry
            } else {
                failures[client] = Failures(windowStart: now, count: 1)
            }
            Self.prune(&failures, since: now - windowMilliseconds, by: \.windowStart)
        }
    }

    /// Whether a refused sign-in of `client` now goes in the audit log: the first in `auditIntervalMilliseconds`.
    func recordsInAudit(_ client: String) -> Bool {
        let now = elapsedMilliseconds
        return audited.withLock { audited in
            if let last = audited[client], now < last + Self.auditIntervalMilliseconds { return false }
            audited[client] = now
            Self.prune(&audited, since: now - Self.auditIntervalMilliseconds, by: \.self)
            return true
        }
    }

    /// Past `maxClients` tracked, the entries that began before `since` go, so a spray of addresses cannot grow
    /// memory without bound. Still full (that many clients within one window), the oldest go, down to half, so
    /// the next prune is far off: filtering alone kept a full table full, and every failure then walked it under
    /// the lock, on an event loop (a route's head check).
    private static func prune<Entry>(_ entries: inout [String: Entry], since: Int64, by began: KeyPath<Entry, Int64>) {
        guard entries.count > maxClients else { return }
        entries = entries.filter { $0.value[keyPath: began] > since }
        if entries.count > maxClients / 2 {
            let recent = entries.sorted { $0.value[keyPath: began] > $1.value[keyPath: began] }.prefix(maxClients / 2)
            entries = Dictionary(uniqueKeysWithValues: recent.map { ($0.key, $0.value) })
        }
    }

    /// The client a request counts against: the same address the rate limit uses.
    func client(of request: HTTPRequest) -> String {
        ClientAddress.limitKey(request, trustedProxies: trustedProxies)
    }

    /// 429 for a blocked client, else nil.
    func refusal(_ request: HTTPRequest) -> HTTPResponse? {
        guard let seconds = retryAfter(for: client(of: request)) else { return nil }
        return JSONResponse.tooManyRequests(
            "too_many_failed_attempts",
            "Too many refused bearer tokens; retry after \(seconds) s.",
            retryAfter: seconds
        )
    }
}

extension FailedAuthThrottle {
    /// The same guard on a route's head (`BodyLimit.admit`), before its body is read: a blocked client gets its
    /// 429, and a refused credential (`credential`'s 401) its 401, counted as a failure as the handler's are (when
    /// a token was presented: `refusedAToken`).
    func guardingHead(_ credential: @escaping @Sendable (HTTPRequest) -> HTTPResponse?)
        -> @Sendable (HTTPRequest) -> HTTPResponse?
    {
        { request in
            if let refusal = self.refusal(request) { return refusal }
            guard let refusal = credential(request) else { return nil }
            if Self.refusedAToken(refusal, request) { self.recordFailure(for: self.client(of: request)) }
            return refusal
        }
    }

    /// Whether `response` refused a token `request` presented: only that counts as a failure. A request that
    /// presents none guesses nothing, and a browser sends one unasked for any `<img>` a web page points at an
    /// admin URL: counted, any page the operator opened locked the operator and the backend out for a minute.
    static func refusedAToken(_ response: HTTPResponse, _ request: HTTPRequest) -> Bool {
        response.status == .unauthorized && BearerAuth.presented(in: request) != nil
    }

    /// Wraps a bearer-protected handler: a blocked client gets 429 before the handler runs, and every 401 the
    /// handler answers to a presented token counts as a failure. Concurrent guesses already past the check still
    /// count, so a client overshoots the limit by at most the worker threads it can keep busy.
    func guarding(_ handler: @escaping Router.Handler) -> Router.Handler {
        { request in
            if let refusal = self.refusal(request) { return refusal }
            let response = try handler(request)
            if Self.refusedAToken(response, request) { self.recordFailure(for: self.client(of: request)) }
            return response
        }
    }
}
