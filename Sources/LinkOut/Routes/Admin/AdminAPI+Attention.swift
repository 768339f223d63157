import Domain
import Foundation
import HTTPServer
import Storage

/// `POST /admin/tokens/{externalPurchaseId}/…`: the operator's answers to a token that needs attention (see
/// `ReportActions`), bearer admin token, JSON out. Reporting is woken so the result goes to Apple at once.
extension AdminAPI {
    /// `POST /admin/tokens/{id}/resend`: the rejected report goes again as it is.
    func resend(_ request: HTTPRequest) throws -> HTTPResponse {
        try act(request) { actions, id in try actions.resend(ExternalPurchaseID(id)) }
    }

    /// `POST /admin/tokens/{id}/no-line-item`: the token is reported `NO_LINE_ITEM`.
    func reportNoLineItem(_ request: HTTPRequest) throws -> HTTPResponse {
        try act(request) { actions, id in try actions.reportNoLineItem(ExternalPurchaseID(id)) }
    }

    /// `POST /admin/tokens/{id}/line-items/{lineItemId}/restate` with the corrected line item (Apple's JSON).
    func restate(_ request: HTTPRequest) throws -> HTTPResponse {
        // Who asks is settled before the body is looked at: a caller without the token learns nothing of it.
        if let refusal = authorize(request) { return refusal }
        // Apple's JSON, as the line-item API takes it: a form or text posted here is a client's mistake.
        guard request.declares("application/json") else {
            return JSONResponse.error(
                .unsupportedMediaType,
                "unsupported_media_type",
                "Send the body as application/json."
            )
        }
        guard request.body.count <= LineItemsAPI.maxBodyBytes else {
            return JSONResponse.error(.contentTooLarge, "body_too_large", "The body is too large.")
        }
        if let refusal = JSONBody.laxnessRefusal(request.body, fields: [], notJSON: "invalid_line_item") {
            return refusal
        }
        let body = String(decoding: request.body, as: UTF8.self)
        let lineItemId = request.pathParameters["lineItemId"] ?? ""
        return try act(request) { actions, id in
            try actions.restate(ExternalPurchaseID(id), lineItemId: LineItemID(lineItemId), body: body)
        }
    }

    /// `POST /admin/tokens/{id}/line-items/{lineItemId}/retract`: dropped if Apple never accepted it, else
    /// retracted (`erroneouslySubmitted`).
    func retract(_ request: HTTPRequest) throws -> HTTPResponse {
        let lineItemId = request.pathParameters["lineItemId"] ?? ""
        return try act(request) { actions, id in
            try actions.retract(ExternalPurchaseID(id), lineItemId: LineItemID(lineItemId))
        }
    }

    private func act(
        _ request: HTTPRequest,
        _ action: (ReportActions, String) throws -> ReportActions.Outcome
    ) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        let id = request.pathParameters["externalPurchaseId"] ?? ""
        do {
            let outcome = try action(ReportActions(ledger: ledger, clock: reporting.clock), id)
            reporting.wake()
            return JSONResponse.json(.ok, outcome)
        } catch let refusal as ReportActions.Refusal {
            switch refusal.kind {
            case .unknownToken: return JSONResponse.error(.notFound, "unknown_token", refusal.description)
            case .conflict: return JSONResponse.error(.conflict, "conflict", refusal.description)
            case .invalid: return JSONResponse.error(.badRequest, "invalid_line_item", refusal.description)
            }
        }
    }

    /// The token's latest report as the audit log's "before" of an action on it: status and state.
    func reportState(_ request: HTTPRequest) throws -> String? {
        try CommandAudit.reportState(ledger, ExternalPurchaseID(request.pathParameters["externalPurchaseId"] ?? ""))
    }
}
