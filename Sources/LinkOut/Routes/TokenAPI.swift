import ExternalPurchase
import Foundation
import HTTPServer
import Lifecycle
import Storage

/// `POST /v1/tokens`: the app forwards a token StoreKit gave it in-app (`presentNoticeSheet()`,
/// `ExternalPurchaseCustomLink.token(for:)`), so it is recorded and reported like a redirect token.
struct TokenAPI: Sendable {
    let configuration: Configuration
    let validator: TokenValidator
    let identifiers: Identifiers
    let ledger: Ledger
    let metrics: Metrics
    let clock: Clock

    static let maxBodyBytes = 16 * 1024

    /// The answer to a body over `maxBodyBytes`, also given by the server when the head declares one.
    @Sendable static func tooLarge(_ request: HTTPRequest) -> HTTPResponse {
        JSONResponse.error(.contentTooLarge, "body_too_large", "The body is larger than \(maxBodyBytes) bytes.")
    }

    struct Request: Decodable {
        var token: String
        var appAccountToken: String?
    }

    struct Reply: Encodable {
        var externalPurchaseId: String
        var environment: String
        var checkoutURL: String
    }

    func forward(_ request: HTTPRequest) throws -> HTTPResponse {
        let contentType = request.headers["content-type"]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/json") else {
            return JSONResponse.error(
                .unsupportedMediaType,
                "unsupported_media_type",
                "Send the body as application/json."
            )
        }
        guard request.body.count <= Self.maxBodyBytes else { return Self.tooLarge(request) }
        guard let body = try? JSONDecoder().decode(Request.self, from: Data(request.body)) else {
            return JSONResponse.error(
                .badRequest,
                "invalid_body",
                "The body must be a JSON object with a string field \"token\" and an optional \"appAccountToken\"."
            )
        }
        if let account = body.appAccountToken, UUID(uuidString: account) == nil {
            return JSONResponse.error(.badRequest, "invalid_app_account_token", "appAccountToken must be a UUID.")
        }
        let token: ExternalPurchaseToken
        switch TokenDecoder.decode(body.token) {
        case .success(let decoded): token = decoded
        case .failure(let rejection): return reject(rejection)
        }
        if let rejection = validator.validate(
            token,
            queryBundleId: nil,
            nowMilliseconds: clock.nowMilliseconds()
        ) {
            return reject(rejection)
        }
        let fields = TokenFields(
            token,
            raw: body.token,
            source: "app",
            appAccountToken: body.appAccountToken?.lowercased()
        )
        let outcome = try ledger.recordForwardedToken(
            fields,
            checkoutId: identifiers.checkoutId(externalPurchaseId: token.externalPurchaseId),
            at: clock.nowMilliseconds()
        )
        if outcome.isNewToken {
            metrics.increment(
                "linkout_tokens_recorded_total",
                [("environment", token.environment.rawValue), ("source", "app")]
            )
        }
        let base =
            configuration.server.publicURL.hasSuffix("/")
            ? String(configuration.server.publicURL.dropLast()) : configuration.server.publicURL
        let reply = Reply(
            externalPurchaseId: token.externalPurchaseId,
            environment: token.environment.rawValue,
            checkoutURL: base + "/checkout/" + outcome.checkoutId
        )
        return JSONResponse.json(outcome.isNewToken ? .created : .ok, reply)
    }

    private func reject(_ rejection: TokenRejection) -> HTTPResponse {
        metrics.increment("linkout_tokens_rejected_total", [("reason", rejection.code)])
        return JSONResponse.error(.badRequest, rejection.code, rejection.message)
    }
}
