import HTTPServer

/// The server's own refusals (no route, wrong method, a body too large) on the paths of the JSON APIs answer in
/// their error form, `{"error": {"code", "message"}}`, as every other refusal there does: an API client reads
/// one shape whatever refused it. Pages and static files keep the plain-text answer.
enum JSONRefusals {
    /// Path prefixes whose routes answer JSON (the admin's few HTML pages share `/admin/`; a refusal there is
    /// for a script more often than for a person, who follows links).
    static let prefixes = ["/v1/", "/admin/", "/webhooks/", "/.well-known/jwks.json", "/openapi.json"]

    @Sendable static func style(_ request: HTTPRequest, _ refusal: HTTPError) -> HTTPResponse? {
        let path = request.path
        guard prefixes.contains(where: { path.hasPrefix($0) }) || path == "/v1" else {
            return nil
        }
        return JSONResponse.error(refusal.status, code(refusal.status), refusal.publicMessage)
    }

    private static func code(_ status: HTTPStatus) -> String {
        switch status.code {
        case 404: "not_found"
        case 405: "method_not_allowed"
        case 413: "body_too_large"
        default: "refused"
        }
    }
}
