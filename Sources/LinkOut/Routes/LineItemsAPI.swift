import Domain
import ExternalPurchase
import Foundation
import HTTPServer
import Lifecycle
import Storage
import Synchronization

/// `POST /v1/tokens/{externalPurchaseId}/line-items`: the developer's payment backend reports transactions for
/// a token in Apple's line-item shape. They are checked against Apple's rules, stored, and reported.
package struct LineItemsAPI: Sendable {
    let configuration: Configuration
    let ledger: Ledger
    let reporting: ReportingService
    let clock: Clock

    package static let maxBodyBytes = 256 * 1024

    /// The answer to a body over `maxBodyBytes`, also given by the server when the head declares one.
    @Sendable static func tooLarge(_ request: HTTPRequest) -> HTTPResponse {
        JSONResponse.error(.contentTooLarge, "body_too_large", "The body is larger than \(maxBodyBytes) bytes.")
    }

    struct Body: Decodable {
        var lineItems: [LineItem]
    }

    struct Accepted: Encodable {
        var externalPurchaseId: ExternalPurchaseID
        var accepted: Int
        var unchanged: Int
    }

    struct Problems: Encodable {
        var errors: [ReportProblem]
    }

    func post(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = refusal(request) { return refusal }
        let id = request.pathParameters["externalPurchaseId"] ?? ""
        guard let token = try ledger.tokens.token(ExternalPurchaseID(id)) else {
            return JSONResponse.error(
                .notFound,
                "unknown_token",
                "No token with this externalPurchaseId has been recorded."
            )
        }
        let items: [LineItem]
        switch Self.decode(request.body) {
        case .success(let decoded): items = decoded
        case .failure(let refusal): return refusal.response
        }
        // Apple: DUPLICATE_TOKEN is "a token you recognise but are not using to report transactions". Once it is
        // reported so, its sales belong on the customer's token that carries them, never on this one.
        if try ledger.reports.reports(for: token.token.externalPurchaseId).declareDuplicate {
            return JSONResponse.error(
                .conflict,
                "duplicate_token",
                "This token was reported to Apple as DUPLICATE_TOKEN, not used for transactions: post its line "
                    + "items on the customer's token that carries them."
            )
        }
        // Checked, then stored only if nothing they were checked against changed meanwhile; else checked again.
        // This server's posts take turns, so only another instance's (or a provider's event) can meet them.
        for _ in 0..<Self.attempts {
            do {
                return try Self.turns.withLock { _ in try checkAndStore(items, for: token) }
            } catch let error as StorageError where error.code == .conflict {
                continue
            }
        }
        return JSONResponse.error(
            .conflict,
            "concurrent_line_items",
            "Other line items for this app were being stored at the same time; send these again."
        )
    }

    /// A refund of a buy that is set aside (Apple would refuse it, or did) is not "unknown": it is refused with what
    /// to do, since the buy's restatement, not a new post, makes the refund's reference good.
    static func namingSetAside(_ problems: [ReportProblem], of sorted: Sorted, _ stored: [StoredLineItem])
        -> [ReportProblem]
    {
        let setAside = Set(stored.filter(\.needsCorrection).map(\.lineItemId))
        guard !setAside.isEmpty else { return problems }
        return problems.map { problem in
            guard problem.name == "NotFoundError", problem.fieldName == "referenceLineItemId",
                case .refund(let refund) = sorted.fresh.first(where: { $0.item.common.lineItemId == problem.lineItemId }
                )?
                .item,
                setAside.contains(refund.referenceLineItemId)
            else { return problem }
            var named = problem
            named.message =
                "the refunded line item \(refund.referenceLineItemId) is set aside as needing correction: restate it "
                + "first (linkout report restate, or POST /admin/tokens/{id}/line-items/{lineItemId}/restate), then "
                + "send this refund"
            return named
        }
    }

    /// How often a post is checked again when line items stored meanwhile changed what it was checked against.
    static let attempts = 5
    /// Held while a post is checked and stored.
    private static let turns = Mutex(())

    private func checkAndStore(_ items: [LineItem], for token: StoredToken) throws -> HTTPResponse {
        let id = token.token.externalPurchaseId
        let stored = try ledger.reports.lineItems(for: id)
        var sorted = try sort(items, for: token, stored: stored)
        let earlier = LineItemScreen.standing(stored)
        let validator = ReportValidator(
            token: token.token,
            earlierLineItems: earlier,
            now: clock.nowMilliseconds()
        )
        // A refund and its buy in one post, in either order: the buys are taken first, as Apple must read them
        // (a report carries its items in the order they were stored).
        sorted.fresh = sorted.fresh.filter { !$0.item.isRefund } + sorted.fresh.filter { $0.item.isRefund }
        sorted.problems += Self.namingSetAside(validator.problems(in: sorted.fresh.map(\.item)), of: sorted, stored)
        guard sorted.problems.isEmpty else { return JSONResponse.json(.badRequest, Problems(errors: sorted.problems)) }
        if !sorted.fresh.isEmpty {
            try ledger.reports.storeLineItems(
                sorted.fresh.map { ($0.item.common.lineItemId, $0.body) },
                for: id,
                at: clock.nowMilliseconds(),
                checked: .init(newestRow: stored.map(\.rowId).max(), bundleId: token.token.bundleId)
            )
            reporting.wake()
        }
        return JSONResponse.json(
            sorted.fresh.isEmpty ? .ok : .accepted,
            Accepted(externalPurchaseId: id, accepted: sorted.fresh.count, unchanged: sorted.unchanged)
        )
    }

    /// The answer to a request this route does not read at all: the API off, a wrong bearer token, a body that
    /// is not JSON or too large.
    private func refusal(_ request: HTTPRequest) -> HTTPResponse? {
        if let refusal = credentialRefusal(request) { return refusal }
        guard request.declares("application/json") else {
            return JSONResponse.error(
                .unsupportedMediaType,
                "unsupported_media_type",
                "Send the body as application/json."
            )
        }
        guard request.body.count <= Self.maxBodyBytes else { return Self.tooLarge(request) }
        return nil
    }

    /// The API off (404) or the bearer token refused (401), else nil: checked when the head arrives too, before
    /// the body is read.
    func credentialRefusal(_ request: HTTPRequest) -> HTTPResponse? {
        BearerAuth.apiRefusal(request, apiToken: configuration.apiToken, api: "line-item API")
    }

    /// A body that cannot be stored, with the `400` that says why.
    struct Refusal: Error {
        var response: HTTPResponse
    }

    private static func decode(_ body: [UInt8]) -> Result<[LineItem], Refusal> {
        // A field named twice in a line item would be read one way here and another way by the next reader.
        // The key itself is not repeated back: it is whatever the client sent.
        if let refusal = JSONBody.laxnessRefusal(body, fields: [], notJSON: "invalid_json") {
            return .failure(Refusal(response: refusal))
        }
        let items: [LineItem]
        do {
            items = try JSONDecoder().decode(Body.self, from: Data(body)).lineItems
        } catch let error as DecodingError {
            let problem = wholeNumberProblem(in: body) ?? problem(error)
            return .failure(Refusal(response: JSONResponse.json(.badRequest, Problems(errors: [problem]))))
        } catch {
            return .failure(Refusal(response: JSONResponse.error(.badRequest, "invalid_json", "The body is not JSON.")))
        }
        let misplaced = LineItemFieldNames.notAllowed(in: body)
        guard misplaced.isEmpty else {
            return .failure(Refusal(response: JSONResponse.json(.badRequest, Problems(errors: misplaced))))
        }
        // Named and shaped like the validator's problems (`ReportValidator`), as every other refused item is.
        guard !items.isEmpty else {
            let problem = ReportProblem("MissingLineItemsForStatusError", field: "lineItems", "lineItems is empty")
            return .failure(Refusal(response: JSONResponse.json(.badRequest, Problems(errors: [problem]))))
        }
        // An id is a key in the ledger: a control character (`\u0000` ends a C string, and PostgreSQL refuses it
        // in text) would make two ids look alike or fail the write, and a bidirectional override or a line
        // separator shows it otherwise than it is on the dashboard and in the operator's terminal. It is also a
        // segment of the admin API's paths (`/admin/tokens/{id}/line-items/{lineItemId}/retract`), where a `/`
        // could never be named.
        let hasUnnameableCharacter = items.contains { item in
            item.common.lineItemId.rawValue.unicodeScalars.contains { HiddenCharacters.contains($0) || $0 == "/" }
        }
        if hasUnnameableCharacter {
            return .failure(
                Refusal(
                    response: JSONResponse.error(
                        .badRequest,
                        "invalid_line_item_id",
                        "A lineItemId holds a control, bidirectional or line-separator character, or a '/'; send "
                            + "visible characters other than '/'."
                    )
                )
            )
        }
        return .success(items)
    }

    /// The posted items split into those to store, those already stored as sent, and those refused.
    struct Sorted {
        var fresh: [(item: LineItem, body: String)] = []
        var unchanged = 0
        var problems: [ReportProblem] = []
    }

    private func sort(_ items: [LineItem], for token: StoredToken, stored: [StoredLineItem]) throws -> Sorted {
        var sorted = Sorted()
        let id = token.token.externalPurchaseId
        // Apple: a lineItemId "must be unique per app", and one transaction is never reported twice: an id
        // already posted for another token of the app is refused, restatement or not.
        let owners = try ledger.notifications.lineItemOwners(
            items.map(\.common.lineItemId),
            bundleId: token.token.bundleId
        )
        for item in items {
            let body = try AppleJSON.text(item)
            let itemId = item.common.lineItemId
            if let owner = owners[itemId], owner != id {
                sorted.problems.append(
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
                    sorted.unchanged += 1
                    continue
                }
                if item.common.restatement != true {
                    sorted.problems.append(
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
            sorted.fresh.append((item, body))
        }
        return sorted
    }

    /// A number that is not a whole one, named with its field (`LineItemWholeNumbers`).
    static func wholeNumberProblem(in body: [UInt8]) -> ReportProblem? {
        LineItemWholeNumbers.firstOffending(inBody: body).map { field in
            ReportProblem("InvalidFieldError", field: field, LineItemWholeNumbers.message(field))
        }
    }

    /// A decoding failure named like Apple's errors, with the field it concerns; `shape` is what the body should
    /// be (this route's list, or the one line item a restatement takes).
    static func problem(_ error: DecodingError, shape: String = "{\"lineItems\": [...]}") -> ReportProblem {
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
            // JSON that does not decode (a number out of its field's range, say): the decoder's words name it.
            return ReportProblem(
                "InvalidBodyError",
                field: field,
                "the body must be JSON: \(shape), each value in its field's range (\(context.debugDescription))"
            )
        @unknown default:
            return ReportProblem("InvalidBodyError", "the body must be JSON: \(shape)")
        }
    }
}

extension HTTPStatus {
    static let accepted = HTTPStatus(code: 202, reasonPhrase: "Accepted")
}
