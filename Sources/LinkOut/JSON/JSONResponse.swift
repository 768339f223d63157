import Foundation
import HTTPServer

/// JSON answers of the API routes: sorted keys (stable bytes for clients and tests), never cached, and errors as
/// `{"error": {"code", "message"}}`.
enum JSONResponse {
    static func json(_ status: HTTPStatus, _ value: some Encodable) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return HTTPResponse(
            status: status,
            headers: ["Content-Type": "application/json", "Cache-Control": "no-store"],
            body: Array(body)
        )
    }

    struct ErrorBody: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
        }
        var error: Detail
    }

    static func error(_ status: HTTPStatus, _ code: String, _ message: String) -> HTTPResponse {
        json(status, ErrorBody(error: .init(code: code, message: message)))
    }

    /// A `429` error that says when to come back (`Retry-After`, in seconds).
    static func tooManyRequests(_ code: String, _ message: String, retryAfter seconds: Int) -> HTTPResponse {
        error(.tooManyRequests, code, message, retryAfter: seconds)
    }

    /// An error that says when to come back (`Retry-After`, in seconds): a `429`, or a `503` for what the server
    /// cannot do for now.
    static func error(_ status: HTTPStatus, _ code: String, _ message: String, retryAfter seconds: Int)
        -> HTTPResponse
    {
        var response = error(status, code, message)
        response.headers.add(name: "Retry-After", value: String(seconds))
        return response
    }
}
