import ExternalPurchase
import Foundation
import HTTPServer
import Lifecycle
import Logging
import Storage

/// The StoreKit redirect target: `GET /?externalPurchaseToken=<token>&bundleId=<id>`.
///
/// Decode and validate on the event loop (microseconds), hand the visit to the ledger's journal, and answer only
/// once it is on disk: a 303 to the checkout's clean URL, so the token leaves the address bar and never reaches
/// a Referer header.
struct LandingRoute: Sendable {
    let configuration: Configuration
    let validator: TokenValidator
    let identifiers: Identifiers
    let ledger: Ledger
    let pages: Pages
    let metrics: Metrics
    let logger: Logger
    let clock: Clock

    static let utmParameters = Set(Visit.utmParameterNames)

    func handle(_ request: HTTPRequest, _ responder: Responder) {
        let isHead = request.method == "HEAD"
        var tokenText: String?
        var queryBundleId: String?
        var utm: [String: String] = [:]
        for item in request.queryItems {
            switch item.name {
            case "externalPurchaseToken": tokenText = tokenText ?? item.value
            case "bundleId": queryBundleId = queryBundleId ?? item.value
            case let name where Self.utmParameters.contains(name): utm[name] = String(item.value.prefix(200))
            default: break
            }
        }
        let now = clock.nowMilliseconds()
        var visit: Visit
        if let tokenText {
            let token: ExternalPurchaseToken
            switch TokenDecoder.decode(tokenText) {
            case .success(let decoded): token = decoded
            case .failure(let rejection):
                responder.respond(reject(rejection, isHead: isHead, request: request, bundleId: queryBundleId))
                return
            }
            if let rejection = validator.validate(token, queryBundleId: queryBundleId, nowMilliseconds: now) {
                responder.respond(reject(rejection, isHead: isHead, request: request, bundleId: queryBundleId))
                return
            }
            visit = Visit(
                token: TokenFields(token, raw: tokenText, source: "url"),
                checkoutId: identifiers.checkoutId(externalPurchaseId: token.externalPurchaseId),
                bundleId: token.bundleId,
                landingPath: String(request.path),
                utm: utm,
                at: now
            )
        } else {
            guard configuration.landing.allowWithoutToken else {
                responder.respond(
                    pages.message(
                        status: .ok,
                        title: "open_from_app_title",
                        message: "open_from_app_message",
                        request: request,
                        app: app(queryBundleId ?? configuration.landing.defaultBundleId)
                    )
                )
                return
            }
            let bundleId = queryBundleId ?? configuration.landing.defaultBundleId
            guard configuration.apps.contains(where: { $0.bundleId == bundleId }) else {
                responder.respond(
                    reject(TokenRejection(.bundleIdNotConfigured), isHead: isHead, request: request, bundleId: nil)
                )
                return
            }
            visit = Visit(
                token: nil,
                checkoutId: identifiers.fresh(),
                bundleId: bundleId,
                landingPath: String(request.path),
                utm: utm,
                at: now
            )
        }
        // Built here, so the ledger's writer thread only hands it over once the visit is committed.
        let acknowledgement = redirect(to: visit.checkoutId, request: request)
        let visitedApp = app(visit.bundleId)
        // Link previews probe with HEAD: same answer, nothing recorded.
        if isHead {
            responder.respond(acknowledgement)
            return
        }
        // Acknowledged once the visit is on disk in the ledger's journal (group-committed with its neighbours).
        ledger.journalVisit(visit) { error in
            guard let error else {
                responder.respond(acknowledgement)
                return
            }
            // A full disk refuses the append at once (no wait for a sync), so this answer is quick; it does not
            // clear within a second, so clients are asked to come back later than after a passing hiccup.
            let diskFull = error.code == .diskFull
            logger.error("visit not recorded", ["error": "\(error)", "disk_full": diskFull ? "true" : "false"])
            var response = pages.message(
                status: .serviceUnavailable,
                title: "unavailable_title",
                message: "unavailable_message",
                request: request,
                app: visitedApp
            )
            response.headers.add(name: "Retry-After", value: diskFull ? "30" : "1")
            responder.respond(response)
        }
    }

    /// 303 to the checkout's clean URL. A landing that records a visit always sets a fresh session id, whatever
    /// session the browser brings: over plain http a cookie can be planted by anyone on the path or on a
    /// neighbouring host, and a session fixed that way before the landing would carry the buyer's checkout (its
    /// CSRF tokens) into the planter's hands. The checkout page reads the new id, so its form works as before.
    private func redirect(to checkoutId: String, request: HTTPRequest) -> HTTPResponse {
        var extraHeaders = HTTPHeaders()
        if request.method != "HEAD" {
            extraHeaders.add(
                name: "Set-Cookie",
                value: Session.rotated(secure: pages.isSecure, identifiers: identifiers)
            )
        }
        return pages.seeOther("/checkout/" + checkoutId, extraHeaders: extraHeaders)
    }

    /// The configured app with `bundleId`, if any.
    private func app(_ bundleId: String?) -> AppConfiguration? {
        configuration.apps.first { $0.bundleId == bundleId }
    }

    /// The 400 page in the visitor's language (worked out only here: a valid visit never needs it). The link's
    /// `bundleId` names the app to go back to when it is one of ours.
    private func reject(_ rejection: TokenRejection, isHead: Bool, request: HTTPRequest, bundleId: String?)
        -> HTTPResponse
    {
        let language = pages.language(for: request)
        if !isHead { metrics.increment("linkout_tokens_rejected_total", [("reason", rejection.code)]) }
        let detail = pages.localization.text("reason_" + rejection.code, language: language)
        return pages.message(
            status: .badRequest,
            title: "invalid_link_title",
            message: "invalid_link_message",
            detail: detail,
            request: request,
            app: app(bundleId)
        )
    }
}

extension TokenFields {
    /// The ledger's fields for a decoded token; `raw` is the token text as received.
    init(_ token: ExternalPurchaseToken, raw: String, source: String, appAccountToken: String? = nil) {
        self.init(
            externalPurchaseId: token.externalPurchaseId,
            rawToken: raw,
            appAppleId: token.appAppleId,
            bundleId: token.bundleId,
            tokenType: token.tokenType,
            createdAt: token.tokenCreationDate,
            expiresAt: token.tokenExpirationDate,
            environment: token.environment.rawValue,
            source: source,
            appAccountToken: appAccountToken
        )
    }
}
