import Domain
import Foundation
import HTTPServer
import Lifecycle
import Storage

/// The developer's backend brings purchases into the app: `POST /v1/redemptions` exchanges the code from the
/// return link for the purchase, exactly once; `GET /v1/purchases` lists a customer's purchases (restoring
/// them). Both need `LINKOUT_API_TOKEN`.
struct RedemptionAPI: Sendable {
    let configuration: Configuration
    let ledger: Ledger
    let identifiers: Identifiers
    let clock: Clock

    /// A redemption is `{"code": "…"}`; anything far larger is not one.
    static let maxBodyBytes = 4096

    /// The answer to a body over `maxBodyBytes`, also given by the server when the head declares one.
    @Sendable static func tooLarge(_ request: HTTPRequest) -> HTTPResponse {
        JSONResponse.error(.contentTooLarge, "body_too_large", "The body is larger than \(maxBodyBytes) bytes.")
    }

    /// A purchase as the backend needs it to grant what was bought.
    struct PurchaseView: Encodable {
        var purchaseId: String
        var productId: String?
        var kind: String
        var status: String
        var externalPurchaseId: String?
        var bundleId: String?
        var appAccountToken: String?
        /// End of the paid period of a subscription, UNIX ms.
        var currentPeriodEnd: Int64?
        var currency: String
        var amountTotal: Int64
        var purchasedAt: Int64
        /// A test purchase (the demo provider, a provider's test mode): no money changed hands.
        var test: Bool
    }

    /// `GET /v1/purchases`.
    struct PurchaseList: Encodable {
        var purchases: [PurchaseView]
    }

    struct Redeemed: Encodable {
        var purchase: PurchaseView
        var redeemedAt: Int64
    }

    struct Refusal: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
            var at: Int64
        }
        var error: Detail
    }

    func redeem(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        guard request.headers["content-type"]?.lowercased().hasPrefix("application/json") == true else {
            return JSONResponse.error(
                .unsupportedMediaType,
                "unsupported_media_type",
                "Send the body as application/json."
            )
        }
        guard request.body.count <= Self.maxBodyBytes else { return Self.tooLarge(request) }
        struct Body: Decodable { var code: String }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(request.body)) else {
            return JSONResponse.error(.badRequest, "invalid_body", #"Send {"code": "<the code from the link>"}."#)
        }
        if let refusal = JSONBody.duplicateKeyRefusal(request.body, fields: ["code"]) { return refusal }
        let code = body.code.lowercased()
        guard Identifiers.isRedemptionCode(code) else {
            return JSONResponse.error(.badRequest, "invalid_code", "This is not a redemption code.")
        }
        switch try ledger.entitlements.redeem(
            codeHash: identifiers.redemptionCodeHash(code),
            at: clock.nowMilliseconds()
        ) {
        case .redeemed(let record):
            guard let purchase = try ledger.payments.purchase(id: record.purchaseId) else {
                return JSONResponse.error(.notFound, "unknown_code", "No purchase has this code.")
            }
            return JSONResponse.json(.ok, Redeemed(purchase: try view(purchase), redeemedAt: record.redeemedAt ?? 0))
        case .alreadyRedeemed(let at):
            return JSONResponse.json(
                .conflict,
                Refusal(error: .init(code: "already_redeemed", message: "This code was redeemed before.", at: at))
            )
        case .expired(let at):
            return JSONResponse.json(
                .gone,
                Refusal(
                    error: .init(
                        code: "expired",
                        message: "This code has expired; restore the purchase instead.",
                        at: at
                    )
                )
            )
        case .notFound:
            return JSONResponse.error(.notFound, "unknown_code", "No purchase has this code.")
        }
    }

    /// `GET /v1/purchases?appAccountToken=…` or `?externalPurchaseId=…`.
    func purchases(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        let rows: [PurchaseRecord]
        if let account = request.queryValue("appAccountToken") {
            // A malformed one is refused even beside a good externalPurchaseId: answering for the other key would
            // hide the client's mistake.
            guard UUID(uuidString: account) != nil else {
                return JSONResponse.error(.badRequest, "invalid_query", "appAccountToken must be a UUID.")
            }
            rows = try ledger.payments.purchases(appAccountToken: account.lowercased())
        } else if let id = request.queryValue("externalPurchaseId") {
            guard !id.isEmpty, id.utf8.count <= 128 else {
                return JSONResponse.error(.badRequest, "invalid_query", "externalPurchaseId is 1 to 128 bytes.")
            }
            rows = try ledger.payments.purchases(externalPurchaseId: id)
        } else {
            return JSONResponse.error(
                .badRequest,
                "missing_query",
                "Ask for ?appAccountToken=<UUID> or ?externalPurchaseId=<id>."
            )
        }
        return JSONResponse.json(.ok, PurchaseList(purchases: try rows.map(view)))
    }

    private func view(_ purchase: PurchaseRecord) throws -> PurchaseView {
        PurchaseView(
            purchaseId: purchase.purchaseId,
            productId: purchase.productId,
            kind: purchase.kind,
            status: purchase.status.rawValue,
            externalPurchaseId: purchase.externalPurchaseId,
            bundleId: purchase.bundleId,
            appAccountToken: try purchase.externalPurchaseId.flatMap { try ledger.tokens.token($0)?.appAccountToken },
            currentPeriodEnd: purchase.periodEnd,
            currency: purchase.currency,
            amountTotal: purchase.amountTotal,
            purchasedAt: purchase.createdAt,
            test: !purchase.live
        )
    }

    private func authorize(_ request: HTTPRequest) -> HTTPResponse? {
        guard let apiToken = configuration.apiToken else {
            return JSONResponse.error(
                .notFound,
                "disabled",
                "The purchase API is off: set LINKOUT_API_TOKEN to enable it."
            )
        }
        return BearerAuth.isAuthorized(request, token: apiToken) ? nil : BearerAuth.unauthorized()
    }
}
