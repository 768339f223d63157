import Domain
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
    /// Visits the ledger refused (a full disk): logged when that starts, once a minute, and when it ends.
    let refusals = FailureStreak()

    static let utmParameters = Set(Visit.utmParameterNames)

    func handle(_ request: HTTPRequest, _ responder: Responder) {
        let visit: Visit
        switch self.visit(for: request) {
        case .success(let made): visit = made
        case .failure(let refusal):
            responder.respond(refusal.response)
            return
        }
        // Built here, so the ledger's writer thread only hands it over once the visit is committed.
        let acknowledgement = redirect(to: visit.checkoutId, request: request)
        // Link previews probe with HEAD: same answer, nothing recorded.
        if request.method == "HEAD" {
            responder.respond(acknowledgement)
            return
        }
        record(visit, request: request, acknowledgement: acknowledgement, responder)
    }

    /// The parts of a landing's query linkout reads: the first of each, UTM values as `campaignValue` keeps them.
    /// `externalPurchaseToken` or `bundleId` given twice with different values is `conflicting`: which one counts
    /// is not for linkout to pick (the first was taken, and a filter in front of it may read the other). The same
    /// value twice is one (a link that carries the bundle ID StoreKit appends again).
    struct Query {
        var tokenText: String?
        var bundleId: BundleID?
        var utm: [String: String] = [:]
        var conflicting: String?

        init(_ request: HTTPRequest) {
            for item in request.queryItems {
                switch item.name {
                case "externalPurchaseToken":
                    if let tokenText, tokenText != item.value { conflicting = conflicting ?? item.name }
                    tokenText = tokenText ?? item.value
                case "bundleId":
                    if let bundleId, bundleId.rawValue != item.value { conflicting = conflicting ?? item.name }
                    bundleId = bundleId ?? BundleID(item.value)
                case let name where LandingRoute.utmParameters.contains(name):
                    if utm[name] == nil { utm[name] = LandingRoute.campaignValue(item.value) }
                default: break
                }
            }
        }
    }

    /// Longest campaign (`utm_*`) value kept, in Unicode scalars.
    static let campaignValueScalars = 200

    /// A `utm_*` value as the ledger keeps it: without hidden characters (a bidi override in a campaign name
    /// reordered the operator's view of it), cut to `campaignValueScalars`. Cut by characters, one `a` with a
    /// thousand combining marks counted as one and ran to the request line's limit.
    static func campaignValue(_ raw: some StringProtocol) -> String {
        var kept = String.UnicodeScalarView()
        var count = 0
        for scalar in raw.unicodeScalars where !HiddenCharacters.contains(scalar) {
            guard count < campaignValueScalars else { break }
            kept.append(scalar)
            count += 1
        }
        return String(kept)
    }

    /// A page to answer instead of recording a visit.
    struct Refusal: Error {
        var response: HTTPResponse
    }

    /// The visit a landing records, or the page that refuses it (a bad token, a landing without one).
    private func visit(for request: HTTPRequest) -> Result<Visit, Refusal> {
        let isHead = request.method == "HEAD"
        let query = Query(request)
        let now = clock.nowMilliseconds()
        if let name = query.conflicting {
            return .failure(
                Refusal(
                    response: reject(
                        TokenRejection(.duplicateField(name)),
                        isHead: isHead,
                        request: request,
                        bundleId: nil
                    )
                )
            )
        }
        guard let tokenText = query.tokenText else { return visitWithoutToken(request, query: query, at: now) }
        let token: ExternalPurchaseToken
        switch TokenDecoder.decode(tokenText) {
        case .success(let decoded): token = decoded
        case .failure(let rejection):
            return .failure(
                Refusal(response: reject(rejection, isHead: isHead, request: request, bundleId: query.bundleId))
            )
        }
        if let rejection = validator.validate(token, queryBundleId: query.bundleId, nowMilliseconds: now) {
            return .failure(
                Refusal(response: reject(rejection, isHead: isHead, request: request, bundleId: query.bundleId))
            )
        }
        return .success(
            Visit(
                token: TokenFields(token, source: .url),
                checkoutId: identifiers.checkoutId(for: token),
                bundleId: token.bundleId,
                landingPath: String(request.path),
                utm: query.utm,
                at: now
            )
        )
    }

    /// A landing with no token: a page asking to open the link from the app, unless the operator allows it.
    private func visitWithoutToken(_ request: HTTPRequest, query: Query, at now: Int64) -> Result<Visit, Refusal> {
        guard configuration.landing.allowWithoutToken else {
            return .failure(
                Refusal(
                    response: pages.message(
                        status: .ok,
                        title: "open_from_app_title",
                        message: "open_from_app_message",
                        request: request,
                        app: app(query.bundleId ?? configuration.landing.defaultBundleId)
                    )
                )
            )
        }
        let bundleId = query.bundleId ?? configuration.landing.defaultBundleId
        guard configuration.apps.contains(where: { $0.bundleId == bundleId }) else {
            let rejection = TokenRejection(.bundleIdNotConfigured)
            return .failure(
                Refusal(response: reject(rejection, isHead: request.method == "HEAD", request: request, bundleId: nil))
            )
        }
        return .success(
            Visit(
                token: nil,
                checkoutId: identifiers.freshCheckoutId(at: now),
                bundleId: bundleId,
                landingPath: String(request.path),
                utm: query.utm,
                at: now
            )
        )
    }

    /// Acknowledged once the ledger has the visit on disk (group-committed with its neighbours).
    private func record(_ visit: Visit, request: HTTPRequest, acknowledgement: HTTPResponse, _ responder: Responder) {
        let visitedApp = app(visit.bundleId)
        ledger.recordVisit(visit) { error in
            guard let error else {
                // Said before the answer goes: whoever got the answer finds the line written (a test read the log
                // the moment its landing was answered, and now and then found it missing).
                if let ended = refusals.succeeded(now: clock.uptimeNanoseconds()) {
                    logger.warning(
                        "visits recorded again",
                        ["refused": String(ended.failures), "refused_for_seconds": String(ended.seconds)]
                    )
                }
                responder.respond(acknowledgement)
                return
            }
            // A full disk refuses the append at once (no wait for a sync), so this answer is quick; it does not
            // clear within a second, so clients are asked to come back later than after a passing hiccup.
            let diskFull = error.code == .diskFull
            if let line = refusals.failed(now: clock.uptimeNanoseconds()) {
                logger.error(
                    line.kind == .started
                        ? "visit not recorded: landings are answered 503 until the ledger writes again"
                        : "visits still not recorded",
                    [
                        "error": "\(error)", "disk_full": diskFull ? "true" : "false",
                        "refused": String(line.failures), "refused_for_seconds": String(line.seconds),
                    ]
                )
            }
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
    private func redirect(to checkoutId: CheckoutID, request: HTTPRequest) -> HTTPResponse {
        var extraHeaders = HTTPHeaders()
        if request.method != "HEAD" {
            extraHeaders.add(
                name: "Set-Cookie",
                value: Session.rotated(secure: pages.isSecure, identifiers: identifiers)
            )
        }
        return pages.seeOther("/checkout/" + checkoutId.rawValue, extraHeaders: extraHeaders)
    }

    /// The configured app with `bundleId`, if any.
    private func app(_ bundleId: BundleID?) -> AppConfiguration? {
        configuration.apps.first { $0.bundleId == bundleId }
    }

    /// The 400 page in the visitor's language (worked out only here: a valid visit never needs it). The link's
    /// `bundleId` names the app to go back to when it is one of ours.
    private func reject(_ rejection: TokenRejection, isHead: Bool, request: HTTPRequest, bundleId: BundleID?)
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
