/// What the server does with a request's body, decided from the method and path when the head arrives and before
/// any body byte is buffered: a body nobody will read must not cost memory (1,000 clients each holding a megabyte
/// for `POST /healthz`, which is a 405 anyway, took a gigabyte).
enum BodyAdmission {
    /// Read a body of at most `maxBytes`; a larger one is answered with `limit.refusal`.
    case read(maxBytes: Int, limit: BodyLimit)
    /// Answer at once without reading the body: no such route (404), or not with this method (405).
    case refuse(HTTPResponse)
}

extension Router {
    /// What the route for `request` takes as a body; `serverLimit` caps every route's limit.
    func admission(for request: HTTPRequest, serverLimit: Int) -> BodyAdmission {
        switch match(method: request.method, path: request.path) {
        case .route(let route, _):
            let limit = styled(route.bodyLimit)
            if let refusal = limit.admit?(request) { return .refuse(refusal) }
            return .read(maxBytes: min(limit.maxBytes ?? serverLimit, serverLimit), limit: limit)
        case .methodNotAllowed(let allowed):
            return .refuse(methodNotAllowed(allowed, request))
        case .notFound:
            return .refuse(notFound(request))
        }
    }
}
