import ExternalPurchase
import Foundation
import HTTPServer
import Lifecycle
import Storage

/// `POST /v1/tokens/{externalPurchaseId}/line-items`: the developer's payment backend reports transactions for
/// a token in Apple's line-item shape. They are checked against Apple's rules, stored, and reported.
struct LineItemsAPI: Sendable {
    let configuration: Configuration
    let ledger: Ledger
    let reporting: ReportingService
    let clock: Clock

    static let maxBodyBytes = 256 * 1024

    /// The answer to a body over `maxBodyBytes`, also given by the server when the head declares one.
    @Sendable static func tooLarge(_ request: HTTPRequest) -> HTTPResponse {
        JSONResponse.error(.contentTooLarge, "body_too_large", "The body is larger than \(maxBodyBytes) bytes.")
    }

    struct Body: Decodable {
        var lineItems: [LineItem]
    }

    struct Accepted: Encodable {
        var externalPurchaseId: String
        var accepted: Int
        var unchanged: Int
    }

    struct Problems: Encodable {
        var errors: [ReportProblem]
    }

    func post(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let apiToken = configuration.apiToken else {
            return JSONResponse.error(
                .notFound,
                "disabled",
                "The line-item API is off: set LINKOUT_API_TOKEN to enable it."
            )
        }
        guard BearerAuth.isAuthorized(request, token: apiToken) else { return BearerAuth.unauthorized() }
        guard request.headers["content-type"]?.lowercased().hasPrefix("application/json") == true else {
            return JSONResponse.error(
                .unsupportedMediaType,
                "unsupported_media_type",
                "Send the body as application/json."
            )
        }
        guard request.body.count <= Self.maxBodyBytes else { return Self.tooLarge(request) }
        let id = request.pathParameters["externalPurchaseId"] ?? ""
        guard let token = try ledger.tokens.token(id) else {
            return JSONResponse.error(
                .notFound,
                "unknown_token",
                "No token with this externalPurchaseId has been recorded."
            )
        }
        let items: [LineItem]
        do {
            items = try JSONDecoder().decode(Body.self, from: Data(request.body)).lineItems
        } catch let error as DecodingError {
            return JSONResponse.json(.badRequest, Problems(errors: [Self.problem(error)]))
        }
        guard !items.isEmpty else {
            return JSONResponse.error(.badRequest, "MissingLineItemsForStatusError", "lineItems is empty.")
        }
        // An id is a key in the ledger: a control character (`\u0000` ends a C string, and PostgreSQL refuses it
        // in text) would make two ids look alike or fail the write.
        let hasControlCharacter = items.contains { item in
            item.common.lineItemId.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
        }
        if hasControlCharacter {
            return JSONResponse.error(
                .badRequest,
                "invalid_line_item_id",
                "A lineItemId holds a control character; send printable characters only."
            )
        }
        let decoder = JSONDecoder()
        let stored = try ledger.reports.lineItems(for: id)
        let earlier = try stored.map { try decoder.decode(LineItem.self, from: Data($0.body.utf8)) }
        var fresh: [(lineItemId: String, body: String)] = []
        var freshItems: [LineItem] = []
        var unchanged = 0
        var problems: [ReportProblem] = []
        // Apple: a lineItemId "must be unique per app", and one transaction is never reported twice: an id
        // already posted for another token of the app is refused, restatement or not.
        let owners = try ledger.notifications.lineItemOwners(items.map(\.common.lineItemId), bundleId: token.bundleId)
        for item in items {
            let body = try AppleJSON.text(item)
            let itemId = item.common.lineItemId
            if let owner = owners[itemId], owner != id {
                problems.append(
                    ReportProblem(
                        "DuplicateValueError",
                        field: "lineItemId",
                        lineItem: itemId,
                        "this lineItemId was posted for another token of this app; line item ids are unique per app"
                    )
                )
                continue
            }
            if let existing = stored.last(where: { $0.lineItemId == itemId }) {
                // The same item sent again is a no-op (retries are safe); a change needs restatement (Apple's rule).
                if existing.body == body {
                    unchanged += 1
                    continue
                }
                if item.common.restatement != true {
                    problems.append(
                        ReportProblem(
                            "DuplicateValueError",
                            field: "lineItemId",
                            lineItem: itemId,
                            "this lineItemId was reported before; send it with restatement true to change it"
                        )
                    )
                    continue
                }
            }
            fresh.append((itemId, body))
            freshItems.append(item)
        }
        let validator = ReportValidator(
            token: token.externalPurchaseToken,
            earlierLineItems: earlier,
            now: clock.nowMilliseconds()
        )
        problems += validator.problems(in: freshItems)
        guard problems.isEmpty else { return JSONResponse.json(.badRequest, Problems(errors: problems)) }
        if !fresh.isEmpty {
            try ledger.reports.storeLineItems(fresh, for: id, at: clock.nowMilliseconds())
            reporting.wake()
        }
        return JSONResponse.json(
            fresh.isEmpty ? .ok : .accepted,
            Accepted(externalPurchaseId: id, accepted: fresh.count, unchanged: unchanged)
        )
    }

    /// A decoding failure named like Apple's errors, with the field it concerns.
    static func problem(_ error: DecodingError) -> ReportProblem {
        switch error {
        case .keyNotFound(let key, _):
            return ReportProblem(
                "OmittedFieldError",
                field: key.stringValue,
                "the field \(key.stringValue) is required"
            )
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let field = context.codingPath.last?.stringValue
            return ReportProblem("InvalidFieldError", field: field, "the field \(field ?? "body") has the wrong type")
        case .dataCorrupted(let context):
            let field = context.codingPath.last?.stringValue
            if field == "eventType" || field == "productType" {
                return ReportProblem("UnknownEnumError", field: field, context.debugDescription)
            }
            return ReportProblem("InvalidBodyError", field: field, "the body must be JSON: {\"lineItems\": [...]}")
        @unknown default:
            return ReportProblem("InvalidBodyError", "the body must be JSON: {\"lineItems\": [...]}")
        }
    }
}

extension HTTPStatus {
    static let accepted = HTTPStatus(code: 202, reasonPhrase: "Accepted")
}
