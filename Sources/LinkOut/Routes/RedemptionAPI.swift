import Domain
import ExternalPurchase
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

    /// A purchase as the backend needs it to grant what was bought.
    struct PurchaseView: Encodable {
        var purchaseId: String
        var productId: ProductID?
        var kind: PurchaseKind
        var status: String
        var externalPurchaseId: ExternalPurchaseID?
        var bundleId: BundleID?
        var appAccountToken: String?
        /// End of the paid period of a subscription, UNIX ms.
        var currentPeriodEnd: Int64?
        var currency: CurrencyCode
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
        /// With `already_redeemed` on the backend's route: the purchase the code was redeemed for, so a backend
        /// whose first answer was lost (a timeout, a dropped connection) still learns it.
        var purchase: PurchaseView? = nil
    }

    func redeem(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        let body: RedemptionBody
        switch RedemptionBody.read(request) {
        case .body(let read): body = read
        case .refused(let response): return response
        }
        switch try ledger.entitlements.redeem(
            codeHash: identifiers.redemptionCodeHash(body.code),
            at: clock.nowMilliseconds()
        ) {
        case .redeemed(let record):
            guard let purchase = try ledger.payments.purchase(id: record.purchaseId) else {
                return JSONResponse.error(.notFound, "unknown_code", "No purchase has this code.")
            }
            return JSONResponse.json(.ok, Redeemed(purchase: try view(purchase), redeemedAt: record.redeemedAt ?? 0))
        case .alreadyRedeemed(let at, let purchaseId):
            var refusal = Refusal(
                error: .init(code: "already_redeemed", message: "This code was redeemed before.", at: at)
            )
            refusal.purchase = try ledger.payments.purchase(id: purchaseId).map(view)
            return JSONResponse.json(.conflict, refusal)
        case .expired(let at):
            return Self.refusal(.gone, "expired", "This code has expired; restore the purchase instead.", at: at)
        case .notFound:
            return JSONResponse.error(.notFound, "unknown_code", "No purchase has this code.")
        }
    }

    /// A refused redemption with when it was used up or expired.
    static func refusal(_ status: HTTPStatus, _ code: String, _ message: String, at: Int64) -> HTTPResponse {
        JSONResponse.json(status, Refusal(error: .init(code: code, message: message, at: at)))
    }

    /// `GET /v1/purchases?appAccountToken=…` or `?externalPurchaseId=…`.
    func purchases(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        // One key, once: a second value (or both keys) was read as the first and the rest quietly ignored.
        let keys = request.queryItems.filter { $0.name == "appAccountToken" || $0.name == "externalPurchaseId" }
        guard keys.count <= 1 else {
            return JSONResponse.error(
                .badRequest,
                "invalid_query",
                "Ask for appAccountToken or externalPurchaseId, one of them, once."
            )
        }
        let rows: [PurchaseRecord]
        if let account = request.queryValue("appAccountToken") {
            // A malformed one is refused even beside a good externalPurchaseId: answering for the other key would
            // hide the client's mistake.
            guard UUID(uuidString: account) != nil else {
                return JSONResponse.error(.badRequest, "invalid_query", "appAccountToken must be a UUID.")
            }
            rows = try ledger.payments.purchases(appAccountToken: account.lowercased())
        } else if let id = request.queryValue("externalPurchaseId") {
            // Held to the shape of Apple's ids, as everywhere an id comes in: a NUL or a line break found nothing
            // and answered 200.
            guard TokenDecoder.isExternalPurchaseId(id) else {
                return JSONResponse.error(
                    .badRequest,
                    "invalid_query",
                    "externalPurchaseId is 1 to 128 letters, digits, - or _."
                )
            }
            rows = try ledger.payments.purchases(externalPurchaseId: ExternalPurchaseID(id))
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
        try Self.view(purchase, ledger: ledger, identifiers: identifiers)
    }

    /// The purchase as the backend and the app see it, with the account of the token it was made on (`[erased]`
    /// once erased).
    static func view(_ purchase: PurchaseRecord, ledger: Ledger, identifiers: Identifiers) throws -> PurchaseView {
        PurchaseView(
            purchaseId: purchase.purchaseId,
            productId: purchase.productId,
            kind: purchase.kind,
            status: purchase.status.rawValue,
            externalPurchaseId: purchase.externalPurchaseId,
            bundleId: purchase.bundleId,
            appAccountToken: try ErasedAccount.shown(
                purchase.externalPurchaseId.flatMap { try ledger.tokens.token($0)?.appAccountToken },
                ledger: ledger,
                identifiers: identifiers
            ),
            currentPeriodEnd: purchase.periodEnd,
            currency: purchase.currency,
            amountTotal: purchase.amountTotal,
            purchasedAt: purchase.createdAt,
            test: !purchase.live
        )
    }

    private func authorize(_ request: HTTPRequest) -> HTTPResponse? {
        BearerAuth.apiRefusal(request, apiToken: configuration.apiToken, api: "purchase API")
    }
}
