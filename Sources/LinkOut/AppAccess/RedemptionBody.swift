import Foundation
import HTTPServer

/// The body of a redemption, `{"code": "…", "appAccountToken": "…"}` (the account only from the app), checked the
/// way every JSON route checks its body.
struct RedemptionBody {
    /// Lower case, as the codes are minted.
    var code: String
    /// Lower case UUID.
    var appAccountToken: String?

    enum Read {
        case body(RedemptionBody)
        case refused(HTTPResponse)
    }

    /// A redemption is a code and perhaps an account; anything far larger is not one.
    static let maxBodyBytes = 4096

    /// The answer to a body over `maxBodyBytes`, also given by the server when the head declares one.
    @Sendable static func tooLarge(_ request: HTTPRequest) -> HTTPResponse {
        JSONResponse.error(.contentTooLarge, "body_too_large", "The body is larger than \(maxBodyBytes) bytes.")
    }

    static func read(_ request: HTTPRequest) -> Read {
        guard request.declares("application/json") else {
            return .refused(
                JSONResponse.error(
                    .unsupportedMediaType,
                    "unsupported_media_type",
                    "Send the body as application/json."
                )
            )
        }
        guard request.body.count <= maxBodyBytes else { return .refused(tooLarge(request)) }
        struct Fields: Decodable {
            var code: String
            var appAccountToken: String?
        }
        guard let fields = try? JSONDecoder().decode(Fields.self, from: Data(request.body)) else {
            return .refused(
                JSONResponse.error(.badRequest, "invalid_body", #"Send {"code": "<the code from the link>"}."#)
            )
        }
        if let refusal = JSONBody.laxnessRefusal(
            request.body,
            fields: ["code", "appAccountToken"],
            notJSON: "invalid_body"
        ) {
            return .refused(refusal)
        }
        // Lowered in ASCII only: Unicode's lowering turns other characters into code letters (KELVIN SIGN into
        // `k`), and a code is letters and digits the person copies, nothing else.
        let code = fields.code.allSatisfy(\.isASCII) ? fields.code.lowercased() : fields.code
        guard Identifiers.isRedemptionCode(code) else {
            return .refused(JSONResponse.error(.badRequest, "invalid_code", "This is not a redemption code."))
        }
        var account: String?
        if let sent = fields.appAccountToken {
            guard let uuid = UUID(uuidString: sent) else {
                return .refused(JSONResponse.error(.badRequest, "invalid_account", "appAccountToken must be a UUID."))
            }
            account = uuid.uuidString.lowercased()
        }
        return .body(RedemptionBody(code: code, appAccountToken: account))
    }
}
