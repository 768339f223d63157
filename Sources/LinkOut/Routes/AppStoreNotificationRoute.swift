import Foundation
import HTTPServer
import Storage

/// `POST /notifications/appstore` (`apple.notificationPath`): App Store Server Notifications V2, a JSON body
/// `{"signedPayload": "<JWS>"}` (Apple: "responseBodyV2"). `200` only once a genuine notification for a configured app
/// is stored (or was stored before); anything else is a 4xx with a JSON error, which makes Apple retry (Apple:
/// "Responding to App Store Server Notifications"), and stores nothing.
struct AppStoreNotificationRoute: Sendable {
    let notifications: AppStoreNotifications

    /// A notification is a few KB (three certificates and a small payload); this bounds the work on junk.
    static let maxBodyBytes = 64 * 1024

    /// The answer to a body over `maxBodyBytes`, also given by the server when the head declares one (counted and
    /// logged like every refusal).
    func tooLarge(_ request: HTTPRequest) -> HTTPResponse {
        notifications.receiver.refused("body_too_large", "over \(Self.maxBodyBytes) bytes", source: .delivery)
        return JSONResponse.error(.contentTooLarge, "body_too_large", "The body is larger than a notification.")
    }

    struct Body: Decodable {
        var signedPayload: String
    }

    func receive(_ request: HTTPRequest) throws -> HTTPResponse {
        guard request.body.count <= Self.maxBodyBytes else { return tooLarge(request) }
        // Read as strictly as every other JSON body: two `signedPayload`s, or text outside JSON's grammar, could be
        // read one way here and another by a proxy or a log before the JWS is checked.
        if let laxness = JSONBody.laxness(request.body, fields: ["signedPayload"], notJSON: "malformed_body") {
            notifications.receiver.refused(laxness.code, "not plain JSON", source: .delivery)
            return JSONResponse.error(.badRequest, laxness.code, laxness.message)
        }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(request.body)) else {
            notifications.receiver.refused("malformed_body", "not {\"signedPayload\": string}", source: .delivery)
            return JSONResponse.error(.badRequest, "malformed_body", "Send {\"signedPayload\": \"<JWS>\"}.")
        }
        switch try notifications.receive(body.signedPayload) {
        case .stored, .duplicate, .test, .ignored:
            return JSONResponse.json(.ok, ["received": true])
        case .refused(let reason, _):
            return JSONResponse.error(.badRequest, reason, "The notification was refused (\(reason)).")
        }
    }
}
