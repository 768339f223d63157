import HTTPServer

/// `?limit=&offset=` of the admin lists, read strictly: a value that is not a whole number in range is a `400`
/// naming the parameter rather than a silent default, so a client's typo never looks like a short last page.
struct Paging: Sendable, Equatable {
    static let defaultLimit = 100
    static let maxLimit = 1000
    /// Far past any real ledger; it keeps `offset + limit` (the next page's offset) clear of overflow.
    static let maxOffset = 1_000_000_000

    var limit: Int
    var offset: Int

    /// What a request asked for: its paging, or the `400` to answer.
    enum Reading {
        case paging(Paging)
        case refused(HTTPResponse)
    }

    static func read(_ request: HTTPRequest) -> Reading {
        guard let limit = number(request.queryValue("limit"), default: defaultLimit, in: 1...maxLimit) else {
            return .refused(
                JSONResponse.error(.badRequest, "invalid_limit", "limit is a whole number from 1 to \(maxLimit).")
            )
        }
        guard let offset = offset(request.queryValue("offset")) else {
            return .refused(
                JSONResponse.error(.badRequest, "invalid_offset", "offset is a whole number from 0 to \(maxOffset).")
            )
        }
        return .paging(Paging(limit: limit, offset: offset))
    }

    /// A request's `offset` (0 without one), or nil when it is not a whole number from 0 to `maxOffset`.
    static func offset(_ text: String?) -> Int? {
        number(text, default: 0, in: 0...maxOffset)
    }

    /// The offset of the page after one that returned `count` rows, when there may be one.
    func nextOffset(afterReturning count: Int) -> Int? {
        count == limit ? offset + limit : nil
    }

    private static func number(_ text: String?, default value: Int, in range: ClosedRange<Int>) -> Int? {
        guard let text else { return value }
        // Digits only: `Int("+5")` would pass, and a sign or space is not what the document promises.
        guard !text.isEmpty, text.utf8.count <= 10, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let number = Int(text), range.contains(number)
        else { return nil }
        return number
    }
}
