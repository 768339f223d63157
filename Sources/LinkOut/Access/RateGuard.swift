import HTTPServer

/// Applies the per-client rate limit to landing and API routes: 429 with `Retry-After`, a page for browsers and
/// JSON for API clients.
struct RateGuard: Sendable {
    let limiter: RateLimiter
    let trustedProxies: Set<String>
    let pages: Pages
    let metrics: Metrics

    /// The 429 to answer with, or nil when the client is within its budget.
    func refusal(_ request: HTTPRequest, html: Bool) -> HTTPResponse? {
        // Limits off (`rateLimitPerSecond` 0): not even the client's key is worked out.
        guard limiter.perSecond > 0,
            let seconds = limiter.delay(for: ClientAddress.limitKey(request, trustedProxies: trustedProxies))
        else {
            return nil
        }
        metrics.increment("linkout_rate_limited_total")
        var response =
            html
            ? pages.message(
                status: .tooManyRequests,
                title: "rate_limited_title",
                message: "rate_limited_message",
                request: request
            )
            : JSONResponse.error(.tooManyRequests, "rate_limited", "Too many requests; retry after \(seconds) s.")
        response.headers.add(name: "Retry-After", value: String(seconds))
        return response
    }

    /// Wraps a page handler (a form post) with the limit: the 429 is a page.
    func limitPage(_ handler: @escaping Router.Handler) -> Router.Handler {
        { request in
            if let refusal = refusal(request, html: true) { return refusal }
            return try handler(request)
        }
    }

    /// Wraps an API handler with the limit.
    func limit(_ handler: @escaping Router.Handler) -> Router.Handler {
        { request in
            if let refusal = refusal(request, html: false) { return refusal }
            return try handler(request)
        }
    }
}
