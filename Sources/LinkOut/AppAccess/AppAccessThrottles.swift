import HTTPServer
import Lifecycle

/// Slows down guessing on the app's routes, which take no operator's secret: per client, every refused redemption
/// counts (a wrong, used or expired code), and every unknown credential; per code, every refused try of that code
/// (a leaked code replayed). A budget of their own: what phones spend never blocks the admin and backend APIs.
/// Past the limit the client, or the code, gets 429 with `Retry-After`, whatever it sends, until its window ends.
struct AppAccessThrottles: Sendable {
    let clients: FailedAuthThrottle
    let codes: FailedAuthThrottle

    init(trustedProxies: Set<String>, clock: Clock) {
        clients = FailedAuthThrottle(
            maxFailures: 10,
            window: .seconds(60),
            trustedProxies: trustedProxies,
            clock: clock
        )
        codes = FailedAuthThrottle(maxFailures: 5, window: .seconds(600), trustedProxies: trustedProxies, clock: clock)
    }

    func client(of request: HTTPRequest) -> String { clients.client(of: request) }

    func clientRefusal(_ client: String) -> HTTPResponse? {
        clients.retryAfter(for: client).map { Self.refusal(seconds: $0, "Too many refused codes or credentials") }
    }

    func codeRefusal(_ codeHash: String) -> HTTPResponse? {
        codes.retryAfter(for: codeHash).map { Self.refusal(seconds: $0, "This code was tried too often") }
    }

    private static func refusal(seconds: Int, _ what: String) -> HTTPResponse {
        JSONResponse.tooManyRequests("too_many_attempts", "\(what); retry after \(seconds) s.", retryAfter: seconds)
    }
}
