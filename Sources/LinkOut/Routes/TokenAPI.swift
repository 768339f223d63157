import Domain
import ExternalPurchase
import Foundation
import HTTPServer
import Lifecycle
import Logging
import Storage

/// `POST /v1/tokens`: the app forwards a token StoreKit gave it in-app (`presentNoticeSheet()`,
/// `ExternalPurchaseCustomLink.token(for:)`), so it is recorded and reported like a redirect token.
///
/// `POST /v1/backend/tokens` takes the same body from the developer's backend (bearer `LINKOUT_API_TOKEN`). The
/// difference is the `appAccountToken`: the app's route is unauthenticated, so its binding is first come, first
/// served, and a different account later gets a 409; the backend's binding is authoritative and replaces an
/// app's (logged), and only another backend binding of another account gets a 409.
struct TokenAPI: Sendable {
    let configuration: Configuration
    let validator: TokenValidator
    let identifiers: Identifiers
    let ledger: Ledger
    /// Woken when a forwarded custom-link token may carry a held line item (`LineItemPlacement`).
    let reporting: ReportingService
    let metrics: Metrics
    let logger: Logger
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
        var externalPurchaseId: ExternalPurchaseID
        var environment: Environment
        var checkoutURL: String
    }

    /// `POST /v1/tokens`, from the app.
    func forward(_ request: HTTPRequest) throws -> HTTPResponse {
        try record(request, bindingSource: .app)
    }

    /// `POST /v1/backend/tokens`, from the developer's backend.
    func forwardFromBackend(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = BearerAuth.apiRefusal(request, apiToken: configuration.apiToken, api: "backend API") {
            return refusal
        }
        return try record(request, bindingSource: .backend)
    }

    private func record(_ request: HTTPRequest, bindingSource: AccountBindingSource) throws -> HTTPResponse {
        let body: Request
        do throws(Refusal) {
            body = try parse(request)
        } catch {
            return error.response
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
            source: .app,
            appAccountToken: body.appAccountToken?.lowercased()
        )
        let outcome = try ledger.tokens.recordForwardedToken(
            fields,
            checkoutId: identifiers.checkoutId(for: token),
            at: clock.nowMilliseconds(),
            bindingSource: bindingSource
        )
        if outcome.isNewToken {
            metrics.increment(
                "linkout_tokens_recorded_total",
                [("environment", token.environment.rawValue), ("source", "app")]
            )
            // A held renewal waits for a token of its customer: the reporting pass places and reports it now
            // rather than at its next poll.
            if fields.appAccountToken != nil, ReportingPolicy.isReportedAtExpiry(token),
                try !ledger.reports.lineItemsAwaitingToken(limit: 1).isEmpty
            {
                reporting.wake()
            }
        }
        switch outcome.binding {
        case .conflict:
            return JSONResponse.error(
                .conflict,
                "account_conflict",
                bindingSource == .backend
                    ? "Your backend bound this token to another appAccountToken before; that binding stands."
                    : "This token is bound to another appAccountToken; that binding stands."
            )
        case .replaced:
            // The app's route is unauthenticated: someone else's forward may have named another account first.
            logger.warning(
                "backend replaced the app's appAccountToken binding",
                ["external_purchase_id": token.externalPurchaseId.rawValue]
            )
        case .none, .bound, .unchanged:
            break
        }
        let base =
            configuration.server.publicURL.hasSuffix("/")
            ? String(configuration.server.publicURL.dropLast()) : configuration.server.publicURL
        let reply = Reply(
            externalPurchaseId: token.externalPurchaseId,
            environment: token.environment,
            checkoutURL: base + "/checkout/" + outcome.checkoutId.rawValue
        )
        return JSONResponse.json(outcome.isNewToken ? .created : .ok, reply)
    }

    /// The 4xx that refuses a body, thrown by `parse`.
    private struct Refusal: Error {
        var response: HTTPResponse

        init(_ status: HTTPStatus, _ code: String, _ message: String) {
            response = JSONResponse.error(status, code, message)
        }

        init(_ response: HTTPResponse) {
            self.response = response
        }
    }

    /// The body, or the 4xx that refuses it: content type, size, JSON shape, a key named twice, the account.
    private func parse(_ request: HTTPRequest) throws(Refusal) -> Request {
        guard request.declares("application/json") else {
            throw Refusal(.unsupportedMediaType, "unsupported_media_type", "Send the body as application/json.")
        }
        guard request.body.count <= Self.maxBodyBytes else {
            throw Refusal(.contentTooLarge, "body_too_large", "The body is larger than \(Self.maxBodyBytes) bytes.")
        }
        guard let body = try? JSONDecoder().decode(Request.self, from: Data(request.body)) else {
            throw Refusal(
                .badRequest,
                "invalid_body",
                "The body must be a JSON object with a string field \"token\" and an optional \"appAccountToken\"."
            )
        }
        if let refusal = JSONBody.laxnessRefusal(
            request.body,
            fields: ["token", "appAccountToken"],
            notJSON: "invalid_body"
        ) {
            throw Refusal(refusal)
        }
        if let account = body.appAccountToken, UUID(uuidString: account) == nil {
            throw Refusal(.badRequest, "invalid_app_account_token", "appAccountToken must be a UUID.")
        }
        return body
    }

    private func reject(_ rejection: TokenRejection) -> HTTPResponse {
        metrics.increment("linkout_tokens_rejected_total", [("reason", rejection.code)])
        return JSONResponse.error(.badRequest, rejection.code, rejection.message)
    }
}
