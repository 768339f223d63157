import Crypto
import HTTPServer

/// `Authorization: Bearer <token>` checked in constant time against a configured secret.
enum BearerAuth {
    /// The token of an `Authorization: Bearer …` header, or nil when there is none.
    static func presented(in request: HTTPRequest) -> String? {
        guard let header = request.headers["authorization"], header.count > 7,
            header.prefix(7).lowercased() == "bearer "
        else { return nil }
        return String(header.dropFirst(7))
    }

    static func isAuthorized(_ request: HTTPRequest, token: String) -> Bool {
        guard let bearer = presented(in: request) else { return false }
        // Compare digests so the time does not depend on where, or whether, the lengths differ.
        let mac = HMACSHA256(key: Array("linkout-bearer-comparison".utf8))
        return HMACSHA256.constantTimeEqual(mac.authenticate(bearer), mac.authenticate(token))
    }

    /// The answer to a call of the developer backend's API (`api`: what it is called in the answer) that may not
    /// go on: the API off without `LINKOUT_API_TOKEN` (404), or the bearer token refused (401); nil when it may.
    static func apiRefusal(_ request: HTTPRequest, apiToken: String?, api: String) -> HTTPResponse? {
        guard let apiToken else {
            return JSONResponse.error(.notFound, "disabled", "The \(api) is off: set LINKOUT_API_TOKEN to enable it.")
        }
        return isAuthorized(request, token: apiToken) ? nil : unauthorized()
    }

    static func unauthorized() -> HTTPResponse {
        var response = JSONResponse.error(.unauthorized, "unauthorized", "Send Authorization: Bearer <token>.")
        response.headers.add(name: "WWW-Authenticate", value: "Bearer")
        return response
    }
}
