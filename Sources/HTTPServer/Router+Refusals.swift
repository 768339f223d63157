/// The server's own refusals (no route 404, not this method 405, a body over a route's limit 413): plain text
/// unless the router was given a `refusalStyle`, through which an application answers its API clients in the form
/// they read (JSON under an API's paths) and everyone else as before.
extension Router {
    /// Makes the response for a refusal of `request`; nil leaves the plain-text one.
    public typealias RefusalStyle = @Sendable (_ request: HTTPRequest, _ refusal: HTTPError) -> HTTPResponse?

    /// The answer to a path no route has.
    func notFound(_ request: HTTPRequest) -> HTTPResponse {
        styled(HTTPError(.notFound, "Not found."), request)
    }

    /// The answer to a method the path's routes do not take, naming those they do (RFC 9110 §15.5.6).
    func methodNotAllowed(_ allowed: [String], _ request: HTTPRequest) -> HTTPResponse {
        styled(
            HTTPError(.methodNotAllowed, "Method not allowed.", headers: ["Allow": allowed.joined(separator: ", ")]),
            request
        )
    }

    /// `limit` with the style's 413 when the route gave none of its own.
    func styled(_ limit: BodyLimit) -> BodyLimit {
        guard limit.tooLarge == nil, let refusalStyle else { return limit }
        var styled = limit
        styled.tooLarge = { request in
            let refusal = HTTPError(.contentTooLarge, limit.refusalMessage)
            return refusalStyle(request, refusal) ?? refusal.response
        }
        return styled
    }

    func styled(_ refusal: HTTPError, _ request: HTTPRequest) -> HTTPResponse {
        var response = refusalStyle?(request, refusal) ?? refusal.response
        // The style words the body; the refusal's own headers (`Allow`) stay whatever it says.
        for field in refusal.headers where response.headers[field.name] == nil {
            response.headers.add(name: field.name, value: field.value)
        }
        return response
    }
}
