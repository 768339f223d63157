import Domain
import ExternalPurchase
import Foundation
import HTTPServer
import Lifecycle
import Outbound
import Storage

/// `/admin/...`: a bearer-token JSON API for operators. Off (404) unless `LINKOUT_ADMIN_TOKEN` is set.
struct AdminAPI: Sendable {
    let configuration: Configuration
    let ledger: Ledger
    let reporting: ReportingService
    let exports = ExportGate()
    let appleLookups = AppleCopyGate()

    /// Most tokens in one `tokens.csv` response (about 30 MB): a larger ledger's export goes on in the next, from
    /// the `Link` header's `after` (`linkout export` writes any size as it reads it). A response is built whole and
    /// held until its client has read it, so this bounds what each slow reader keeps in memory.
    static let csvRowLimit = 250_000

    struct ReportList: Encodable {
        var reporting: String
        var reports: [StoredReport]
        /// With `state=needs_attention`: the tokens that need a person, oldest first, each with its rejected
        /// report and the line items set aside with Apple's message.
        var attention: [AttentionEntry]?
    }

    struct TokenDetail: Encodable {
        var token: StoredToken
        var visits: [VisitRow]
        var checkoutIntents: [CheckoutIntentRow]
        var lineItems: [StoredLineItem]
        var reports: [StoredReport]
        var paymentSessions: [PaymentSessionRecord]
        var purchases: [PurchaseRecord]
    }

    struct TokenPage: Encodable {
        var tokens: [StoredToken]
        var limit: Int
        var offset: Int
        /// The offset of the next page, when there may be one.
        var nextOffset: Int?
        /// The `after` of the next page, when there may be one: its cost is that page's, where an offset's grows
        /// with the rows before it.
        var nextAfter: String?
    }

    /// `GET /admin/tokens?q=<externalPurchaseId prefix>&environment=&limit=&offset=&after=`: tokens, oldest first;
    /// `after` (a page's `nextAfter`) starts after that token.
    func tokens(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        var environment: Environment?
        if let text = request.queryValue("environment") {
            guard let known = Environment(rawValue: text) else {
                return JSONResponse.error(.badRequest, "invalid_environment", "environment is production or sandbox.")
            }
            environment = known
        }
        let paging: Paging
        switch Paging.read(request) {
        case .paging(let read): paging = read
        case .refused(let response): return response
        }
        let after: TokenCursor?
        switch Self.cursor(request, from: "a page's nextAfter") {
        case .success(let read): after = read
        case .failure(let refusal): return refusal.response
        }
        // Visits acknowledged a moment ago may still sit in the journal: an operator sees them at once (unless a
        // burst is being folded in; then the list answers without them).
        ledger.awaitRecentVisits()
        let rows = try ledger.tokens.tokens(
            limit: paging.limit,
            offset: paging.offset,
            search: request.queryValue("q"),
            environment: environment,
            after: after
        )
        let more = paging.nextOffset(afterReturning: rows.count)
        return JSONResponse.json(
            .ok,
            TokenPage(
                tokens: rows,
                limit: paging.limit,
                offset: paging.offset,
                nextOffset: more,
                nextAfter: more == nil ? nil : rows.last.map { TokenCursor(after: $0).text }
            )
        )
    }

    /// `GET /admin/tokens.csv[?after=]`: the ledger as CSV (the same columns as `linkout export`), oldest first, at
    /// most `csvRowLimit` tokens; with more left, a `Link` header (`rel="next"`) names the request for the rest.
    func exportCSV(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        let after: TokenCursor?
        switch Self.cursor(request, from: "the Link header's") {
        case .success(let read): after = read
        case .failure(let refusal): return refusal.response
        }
        return try exports.run {
            ledger.awaitRecentVisits()
            var body = Array(LedgerCSV.headerLine.utf8)
            let next = try LedgerCSV.export(ledger, after: after, limit: Self.csvRowLimit) { body += $0.utf8 }
            var response = HTTPResponse(
                status: .ok,
                headers: [
                    "Content-Type": "text/csv; charset=utf-8",
                    "Content-Disposition": "attachment; filename=\"linkout-tokens.csv\"",
                    "Cache-Control": "no-store",
                ],
                body: body
            )
            if let next {
                let query = next.text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? next.text
                response.headers.add(name: "Link", value: "</admin/tokens.csv?after=\(query)>; rel=\"next\"")
            }
            return response
        }
    }

    /// A refusal to answer instead (a 400 in the API's JSON).
    struct Refused: Error {
        var response: HTTPResponse
    }

    /// The request's `after` (`<firstSeenAt>:<externalPurchaseId>`, as `source` gives it), nil without one.
    static func cursor(_ request: HTTPRequest, from source: String) -> Result<TokenCursor?, Refused> {
        guard let text = request.queryValue("after") else { return .success(nil) }
        guard let cursor = TokenCursor(text) else {
            return .failure(
                Refused(
                    response: JSONResponse.error(
                        .badRequest,
                        "invalid_after",
                        "after is \(source): <firstSeenAt>:<externalPurchaseId>."
                    )
                )
            )
        }
        return .success(cursor)
    }

    func authorize(_ request: HTTPRequest) -> HTTPResponse? {
        guard let token = configuration.adminToken else { return JSONRefusals.notFound }
        return BearerAuth.isAuthorized(request, token: token) ? nil : BearerAuth.unauthorized()
    }

    /// `GET /admin/reports?state=pending|accepted|rejected|needs_attention&limit=&offset=`: newest first, with
    /// what Apple said. `needs_attention` lists the tokens a person must act on (`attention`): a rejected report,
    /// or line items set aside with Apple's message.
    func reports(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        var state: ReportState?
        let needsAttention = request.queryValue("state") == "needs_attention"
        if let text = request.queryValue("state"), !needsAttention {
            guard let parsed = ReportState(rawValue: text) else {
                return JSONResponse.error(
                    .badRequest,
                    "invalid_state",
                    "state is pending, accepted, rejected or needs_attention."
                )
            }
            state = parsed
        }
        let paging: Paging
        switch Paging.read(request) {
        case .paging(let read): paging = read
        case .refused(let response): return response
        }
        let reports = try ledger.reports.reports(
            limit: paging.limit,
            offset: paging.offset,
            state: needsAttention ? .rejected : state
        )
        return JSONResponse.json(
            .ok,
            ReportList(
                reporting: reporting.status.description,
                reports: reports,
                attention: needsAttention
                    ? try ledger.reports.needingAttention(limit: paging.limit, offset: paging.offset) : nil
            )
        )
    }

    struct AppleCopy: Encodable {
        var requestIdentifier: RequestIdentifier
        var appleStatus: Int
        var appleBody: String
    }

    /// `GET /admin/reports/{requestIdentifier}/apple`: what Apple holds for a report (Retrieve External Purchase
    /// Report), to compare with what the outbox says was accepted.
    func appleCopy(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        return try appleLookups.run(request) { try lookUpAppleCopy(request) }
    }

    private func lookUpAppleCopy(_ request: HTTPRequest) throws -> HTTPResponse {
        let id = request.pathParameters["requestIdentifier"] ?? ""
        guard let report = try ledger.reports.report(RequestIdentifier(id)) else {
            return JSONResponse.error(.notFound, "unknown_report", "No report with this requestIdentifier.")
        }
        guard let client = reporting.client else {
            return JSONResponse.error(.serviceUnavailable, "no_credentials", reporting.status.description)
        }
        let environment = report.environment
        switch client.retrieve(
            requestIdentifier: RequestIdentifier(id),
            environment: environment,
            bundleId: report.bundleId,
            now: reporting.clock.nowMilliseconds()
        ) {
        case .success(let answer):
            return JSONResponse.json(
                .ok,
                AppleCopy(requestIdentifier: RequestIdentifier(id), appleStatus: answer.status, appleBody: answer.body)
            )
        case .failure(let error):
            return JSONResponse.error(.serviceUnavailable, "apple_unreachable", error.description)
        }
    }

    /// `GET /admin/tokens/{externalPurchaseId}`: the token, its line items and its report history.
    func token(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        let id = request.pathParameters["externalPurchaseId"] ?? ""
        guard let token = try ledger.tokens.token(ExternalPurchaseID(id)) else {
            return JSONResponse.error(
                .notFound,
                "unknown_token",
                "No token with this externalPurchaseId has been recorded."
            )
        }
        return JSONResponse.json(
            .ok,
            TokenDetail(
                token: token,
                visits: try ledger.tokens.visits(for: ExternalPurchaseID(id)),
                checkoutIntents: try ledger.tokens.checkoutIntents(checkoutId: token.checkoutId),
                lineItems: try ledger.reports.lineItems(for: ExternalPurchaseID(id)),
                reports: try ledger.reports.reports(for: ExternalPurchaseID(id)),
                paymentSessions: try ledger.payments.paymentSessions(checkoutId: token.checkoutId),
                purchases: try ledger.payments.purchases(externalPurchaseId: ExternalPurchaseID(id))
            )
        )
    }
}
