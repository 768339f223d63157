import Crypto
import HTTPServer

/// `Authorization: Bearer <token>` checked in constant time against a configured secret.
enum BearerAuth {
    static func isAuthorized(_ request: HTTPRequest, token: String) -> Bool {
        guard let header = request.headers["authorization"], header.count > 7,
            header.prefix(7).lowercased() == "bearer "
        else { return false }
        let presented = Array(header.dropFirst(7).utf8)
        let expected = Array(token.utf8)
        // Compare digests so the time does not depend on where, or whether, the lengths differ.
        let mac = HMACSHA256(key: Array("linkout-bearer-comparison".utf8))
        return HMACSHA256.constantTimeEqual(
            mac.authenticate(String(decoding: presented, as: UTF8.self)),
            mac.authenticate(String(decoding: expected, as: UTF8.self))
        )
    }

    static func unauthorized() -> HTTPResponse {
        var response = JSONResponse.error(.unauthorized, "unauthorized", "Send Authorization: Bearer <token>.")
        response.headers.add(name: "WWW-Authenticate", value: "Bearer")
        return response
    }
}
