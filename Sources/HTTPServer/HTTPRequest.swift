/// One parsed request, handed to a route's handler.
public struct HTTPRequest: Sendable {
    /// The HTTP version of the request line.
    public enum Version: Sendable, Equatable {
        case http1_0, http1_1
    }

    public var method: String
    /// The request target exactly as sent (origin-form: path and optional query).
    public var target: String
    public var version: Version
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Values captured by `{name}` segments of the matched route, percent-decoded.
    public var pathParameters: [String: String] = [:]
    /// The peer's address as the socket reports it (no proxy headers applied).
    public var remoteAddress: String = ""
    /// This request's id, also sent back as `X-Request-Id` (the caller's own, when it sent a plain one).
    public var id: String = ""

    public init(
        method: String,
        target: String,
        version: Version = .http1_1,
        headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = []
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// The path part of the target, still percent-encoded.
    public var path: Substring {
        // Byte search: the request line is ASCII, and Character iteration costs more than the rest of routing.
        guard let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return target[...] }
        return target[..<question]
    }

    /// The query part of the target without the `?`, still encoded; empty when there is none.
    public var rawQuery: Substring {
        guard let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return "" }
        return target[target.utf8.index(after: question)...]
    }

    /// Query items in order, form-decoded (`+` is a space, `%XX` a byte). Malformed escapes are kept literally.
    public var queryItems: [(name: String, value: String)] {
        FormDecoding.items(rawQuery)
    }

    /// The first query value named `name`, decoded.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// Whether the connection stays open after this request (RFC 9112 §9.3).
    public var keepAlive: Bool {
        var close = false
        var keepAlive = false
        for value in headers.values(for: "connection") {
            for token in value.utf8.split(separator: UInt8(ascii: ",")) {
                let trimmed = token.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }
                let lowered = trimmed.reversed().map { $0 | 0x20 }
                if lowered.elementsEqual("close".utf8) { close = true }
                if lowered.elementsEqual("keep-alive".utf8) { keepAlive = true }
            }
        }
        if close { return false }
        return version == .http1_1 || keepAlive
    }
}

extension Substring {
    func trimmingASCIIWhitespace() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}
