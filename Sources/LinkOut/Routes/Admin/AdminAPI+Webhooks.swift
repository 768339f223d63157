import Domain
import HTTPServer
import Storage

/// `/admin/webhooks`: entitlement events for the developer's backend, delivered or not, with the last answer.
extension AdminAPI {
    struct WebhookList: Encodable {
        var counts: [String: Int64]
        var webhooks: [WebhookDelivery]
    }

    /// `GET /admin/webhooks?state=pending|delivered|failed&limit=&offset=`: newest first.
    func webhooks(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        var state: WebhookState?
        if let text = request.queryValue("state") {
            guard let parsed = WebhookState(rawValue: text) else {
                return JSONResponse.error(.badRequest, "invalid_state", "state is pending, delivered or failed.")
            }
            state = parsed
        }
        let paging: Paging
        switch Paging.read(request) {
        case .paging(let read): paging = read
        case .refused(let response): return response
        }
        let counts = try ledger.entitlements.webhookCounts()
        return JSONResponse.json(
            .ok,
            WebhookList(
                counts: Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) }),
                webhooks: try ledger.entitlements.webhooks(state: state, limit: paging.limit, offset: paging.offset)
            )
        )
    }
}
