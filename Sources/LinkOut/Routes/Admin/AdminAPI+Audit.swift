import HTTPServer
import Storage

/// `GET /admin/audit?limit=&before=`: the audit log, newest first, a page at a time (`before`: the last id of the
/// page before; `nextBefore` says where the next page starts).
extension AdminAPI {
    struct AuditPage: Encodable {
        var entries: [AuditEntry]
        var nextBefore: Int64?
    }

    func audit(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = authorize(request) { return refusal }
        let limit: Int
        switch Paging.read(request) {
        case .paging(let paging): limit = paging.limit
        case .refused(let response): return response
        }
        var before: Int64?
        if let text = request.queryValue("before") {
            guard text.utf8.count <= 19, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int64(text),
                value > 0
            else {
                return JSONResponse.error(
                    .badRequest,
                    "invalid_before",
                    "before is an entry id, a whole number from 1 to \(Int64.max)."
                )
            }
            before = value
        }
        let entries = try ledger.audit.entries(before: before, limit: limit)
        return JSONResponse.json(
            .ok,
            AuditPage(entries: entries, nextBefore: entries.count == limit ? entries.last?.id : nil)
        )
    }
}
