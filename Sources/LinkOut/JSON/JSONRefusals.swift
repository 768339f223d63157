import HTTPServer

/// The server's own refusals (no route, wrong method, a body too large) on the paths of the JSON APIs answer in
/// their error form, `{"error": {"code", "message"}}`, as every other refusal there does: an API client reads
/// one shape whatever refused it. Pages and static files keep the plain-text answer.
enum JSONRefusals {
    /// Path prefixes whose routes answer JSON (the admin's few HTML pages share `/admin/`; a refusal there is
    /// for a script more often than for a person, who follows links).
    static let prefixes = ["/v1/", "/admin/", "/webhooks/", "/.well-known/jwks.json", "/openapi.json"]

    /// The style for a router whose JSON routes also include `paths` exactly (Apple's notification path, which
    /// the configuration names: it answered its own refusals in JSON and the server's, a 405, in plain text).
    static func style(alsoAt paths: [String]) -> Router.RefusalStyle {
        { request, refusal in
            let path = request.path
            guard
                prefixes.contains(where: { path.hasPrefix($0) }) || path == "/v1"
                    || paths.contains(where: { $0 == path })
            else {
                return nil
            }
            return JSONResponse.error(refusal.status, code(refusal.status), refusal.publicMessage)
        }
    }

    /// A route of the JSON APIs that answers as if it were not there (the admin API without an admin token, a
    /// provider's webhooks with no such provider): the same answer as a path with no route, so neither tells a
    /// prober which routes exist.
    static var notFound: HTTPResponse { JSONResponse.error(.notFound, code(.notFound), "Not found.") }

    private static func code(_ status: HTTPStatus) -> String {
        switch status.code {
        case 404: "not_found"
        case 405: "method_not_allowed"
        case 413: "body_too_large"
        default: "refused"
        }
    }
}
