/// Parses an HTTP/1.x request head from buffered bytes: a pure function of its input, so every rejection is
/// unit-testable. Framing rules follow RFC 9112; anything ambiguous that could smuggle a second request past a
/// proxy (Content-Length with Transfer-Encoding, differing Content-Lengths, obs-fold, bad field names) is refused.
public struct RequestParser: Sendable {
    /// Size limits; each breach has its own status.
    public struct Limits: Sendable, Equatable {
        /// Longest request line (method, target, version); beyond it 414.
        public var maxRequestLineBytes = 8 * 1024
        /// Largest header block after the request line; beyond it 431.
        public var maxHeaderBytes = 16 * 1024
        /// Most header fields; beyond it 431.
        public var maxHeaderCount = 100
        /// Largest body any route takes, Content-Length or chunked; beyond it 413. Each route's own limit
        /// (`BodyLimit`) is checked when the head arrives and is capped by this one.
        public var maxBodyBytes = 1024 * 1024

        public init() {}
    }

    /// How the body that follows the head is delimited.
    package enum BodyFraming: Sendable, Equatable {
        case none
        case length(Int)
        case chunked
    }

    /// The parsed head of a request.
    package struct Head: Sendable, Equatable {
        package var method: String
        package var target: String
        package var version: HTTPRequest.Version
        package var headers: HTTPHeaders
        package var framing: BodyFraming
        /// The client sent `Expect: 100-continue` and waits for an interim response before the body.
        package var expectsContinue: Bool
    }

    package enum HeadResult: Sendable, Equatable {
        case incomplete
        case invalid(HTTPStatus)
        /// A head and the number of bytes it used (including any empty lines before it).
        case head(Head, consumed: Int)
    }

    /// The outcome of parsing a whole request (head and body).
    package enum RequestResult: Sendable {
        case incomplete
        case invalid(HTTPStatus)
        case request(HTTPRequest, consumed: Int)
    }

    package var limits: Limits

    package init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Parses a head and, when complete, its body. Convenience for tests and simple callers.
    package func parseRequest(_ bytes: ArraySlice<UInt8>) -> RequestResult {
        switch parseHead(bytes) {
        case .incomplete: return .incomplete
        case .invalid(let status): return .invalid(status)
        case .head(let head, let headLength):
            let rest = bytes.dropFirst(headLength)
            switch BodyReader.decode(rest, framing: head.framing, maxBodyBytes: limits.maxBodyBytes) {
            case .incomplete: return .incomplete
            case .invalid(let status): return .invalid(status)
            case .body(let body, let bodyLength):
                var request = HTTPRequest(method: head.method, target: head.target, version: head.version)
                request.headers = head.headers
                request.body = body
                return .request(request, consumed: headLength + bodyLength)
            }
        }
    }

    /// Parses the request line and header fields.
    package func parseHead(_ bytes: ArraySlice<UInt8>) -> HeadResult {
        parseHead(bytes, resuming: nil)
    }

    /// Where an earlier parse of the same head, shorter, found its request line's CRLF (`lineEnd`) and judged the
    /// first `judged` bytes incomplete: only the bytes after those are searched for the head's end and judged.
    /// Offsets count from the head's first byte.
    struct Resumption {
        var lineEnd: Int
        var judged: Int
    }

    func parseHead(_ bytes: ArraySlice<UInt8>, resuming resumption: Resumption?) -> HeadResult {
        let start = Self.requestLineStart(bytes)
        let lineEnd: Int
        if let resumption {
            lineEnd = bytes.startIndex + resumption.lineEnd
        } else {
            guard let found = Self.findCRLF(bytes, from: start) else {
                // Judged as the whole line will be: a last CR may be its end's first half.
                let partialCR = bytes.last == cr ? 1 : 0
                if bytes.endIndex - start - partialCR > limits.maxRequestLineBytes { return .invalid(.uriTooLong) }
                return Self.requestLineCannotComplete(bytes[start...]) ? .invalid(.badRequest) : .incomplete
            }
            lineEnd = found
        }
        if lineEnd - start > limits.maxRequestLineBytes { return .invalid(.uriTooLong) }
        // A CRLF CRLF ending in the new bytes starts at most three bytes before them.
        let judged = bytes.startIndex + (resumption?.judged ?? 0)
        guard let headEnd = Self.findHeadEnd(bytes, from: max(lineEnd, judged - 3)) else {
            if bytes.endIndex - lineEnd > maxBytesAfterLineWhileIncomplete { return .invalid(.headerFieldsTooLarge) }
            // The request line is judged as soon as it is in, so a bad one is refused at once however its bytes
            // arrived (a look that resumes comes after the one that judged it).
            if resumption == nil, case .failure(let error) = Self.parseRequestLine(bytes[start..<lineEnd]) {
                return .invalid(error.status)
            }
            let fields = max(lineEnd + 2, judged)
            return Self.fieldsCannotComplete(bytes[fields...], after: bytes[fields - 1])
                ? .invalid(.badRequest) : .incomplete
        }
        if headEnd - lineEnd > limits.maxHeaderBytes + 4 { return .invalid(.headerFieldsTooLarge) }

        let requestLine: (method: String, target: String, authority: String?, version: HTTPRequest.Version)
        switch Self.parseRequestLine(bytes[start..<lineEnd]) {
        case .failure(let error): return .invalid(error.status)
        case .success(let line): requestLine = line
        }

        var headers = HTTPHeaders()
        var lineStart = lineEnd + 2
        while lineStart < headEnd {
            guard let end = Self.findCRLF(bytes, from: lineStart), end <= headEnd else { return .invalid(.badRequest) }
            if headers.count == limits.maxHeaderCount { return .invalid(.headerFieldsTooLarge) }
            guard let field = Self.parseField(bytes[lineStart..<end]) else { return .invalid(.badRequest) }
            headers.add(name: field.name, value: field.value)
            lineStart = end + 2
        }

        switch Self.framing(headers: headers, version: requestLine.version, maxBodyBytes: limits.maxBodyBytes) {
        case .failure(let error): return .invalid(error.status)
        case .success(let framing):
            var expectsContinue = false
            // Every Expect field is read (RFC 9110 §10.1.1: an expectation not understood is 417), not the first.
            let expectations = headers.values(for: "expect")
            if !expectations.isEmpty {
                guard expectations.allSatisfy({ $0.lowercased() == "100-continue" }) else {
                    return .invalid(.expectationFailed)
                }
                expectsContinue = requestLine.version == .http1_1
            }
            if requestLine.version == .http1_1 {
                // RFC 9112 §3.2: exactly one Host in an HTTP/1.1 request.
                guard headers.count(of: "host") == 1 else { return .invalid(.badRequest) }
            }
            // RFC 9112 §3.2: a 400 for a Host (or an absolute target's authority) that is not a host and port.
            guard headers["host"].map(isHost) ?? true, requestLine.authority.map(isHost) ?? true else {
                return .invalid(.badRequest)
            }
            // RFC 9110 §5.3: a field that is not a list is sent once. Two of these would be read one way here
            // and another by a proxy in front (which caller it is, what the body is).
            guard Self.singleFields.allSatisfy({ headers.count(of: $0) <= 1 }) else { return .invalid(.badRequest) }
            if let authority = requestLine.authority {
                // RFC 9112 §3.2.2: the target's authority replaces whatever Host says.
                headers.replace(name: "Host", value: authority)
            }
            let head = Head(
                method: requestLine.method,
                target: requestLine.target,
                version: requestLine.version,
                headers: headers,
                framing: framing,
                expectsContinue: expectsContinue
            )
            return .head(head, consumed: headEnd + 4 - bytes.startIndex)
        }
    }

    /// Fields whose second copy is refused (an HTTP/1.1 request also needs its one Host).
    static let singleFields = ["host", "authorization", "content-type", "stripe-signature", "paddle-signature"]

    struct Rejection: Error {
        var status: HTTPStatus
    }

    private static func parseRequestLine(
        _ line: ArraySlice<UInt8>
    ) -> Result<(method: String, target: String, authority: String?, version: HTTPRequest.Version), Rejection> {
        // Exactly two spaces: a third one leaves a space in the version, which its check refuses. Found with
        // `firstIndex(of:)` (a landing's line carries a token of some hundreds of bytes).
        guard let firstSpace = line.firstIndex(of: space),
            let secondSpace = line[(firstSpace + 1)...].firstIndex(of: space)
        else { return .failure(Rejection(status: .badRequest)) }
        let method = line[..<firstSpace]
        let target = line[(firstSpace + 1)..<secondSpace]
        let version = line[(secondSpace + 1)...]
        guard !method.isEmpty, method.allSatisfy(isTokenByte) else { return .failure(Rejection(status: .badRequest)) }
        // No fragment (RFC 9112 §3.2: no form of request-target has one): a proxy in front reads `http://x#metrics`
        // or `/#admin` as the path `/` with a fragment, and would have let through what linkout routed elsewhere.
        guard target.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") }) else {
            return .failure(Rejection(status: .badRequest))
        }
        // Origin-form (RFC 9112 §3.2.1), or absolute-form (§3.2.2), which is routed by its path; `*` for OPTIONS
        // is not served.
        let originForm: ArraySlice<UInt8>
        var authority: String?
        if target.first == slash {
            originForm = target
        } else if let absolute = splitAbsoluteForm(target) {
            originForm = absolute.originForm
            authority = String(decoding: absolute.authority, as: UTF8.self)
        } else {
            return .failure(Rejection(status: .badRequest))
        }
        guard version.count == 8, version.starts(with: httpSlash), isDigit(version[version.startIndex + 5]),
            version[version.startIndex + 6] == dot, isDigit(version[version.startIndex + 7])
        else { return .failure(Rejection(status: .badRequest)) }
        let major = version[version.startIndex + 5]
        let minor = version[version.startIndex + 7]
        // RFC 9112 §2.3: a later HTTP/1.x is answered as the highest 1.x we speak, 1.1.
        guard major == UInt8(ascii: "1") else { return .failure(Rejection(status: .httpVersionNotSupported)) }
        let parsedVersion: HTTPRequest.Version = minor == UInt8(ascii: "0") ? .http1_0 : .http1_1
        let originTarget =
            originForm.isEmpty || originForm.first == UInt8(ascii: "?")
            ? "/" + String(decoding: originForm, as: UTF8.self) : String(decoding: originForm, as: UTF8.self)
        return .success((String(decoding: method, as: UTF8.self), originTarget, authority, parsedVersion))
    }

    /// `http://authority/path?query` (scheme case-insensitive, http or https) → the authority and the rest (which
    /// may be empty or start with `?`); nil when the target is not that shape or carries userinfo.
    private static func splitAbsoluteForm(
        _ target: ArraySlice<UInt8>
    ) -> (authority: ArraySlice<UInt8>, originForm: ArraySlice<UInt8>)? {
        guard let colon = target.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let scheme = target[target.startIndex..<colon].map { $0 | 0x20 }
        guard scheme.elementsEqual("http".utf8) || scheme.elementsEqual("https".utf8) else { return nil }
        let rest = target[(colon + 1)...]
        guard rest.starts(with: [slash, slash]) else { return nil }
        let authorityStart = rest.startIndex + 2
        let authorityEnd =
            target[authorityStart...].firstIndex { $0 == slash || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? target.endIndex
        let authority = target[authorityStart..<authorityEnd]
        // RFC 9110 §4.2.4: userinfo in an http(s) URI is an error.
        guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")) else { return nil }
        return (authority, target[authorityEnd...])
    }

    /// `name ":" OWS value OWS`; nil for obs-fold, whitespace before the colon, or bytes not allowed.
    private static func parseField(_ line: ArraySlice<UInt8>) -> (name: String, value: String)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else { return nil }
        let name = line[line.startIndex..<colon]
        // A leading space or tab is obs-fold; a space before the colon is forbidden (RFC 9112 §5.1, §5.2).
        guard name.allSatisfy(isTokenByte) else { return nil }
        var valueStart = colon + 1
        var valueEnd = line.endIndex
        while valueStart < valueEnd, line[valueStart] == space || line[valueStart] == tab { valueStart += 1 }
        while valueEnd > valueStart, line[valueEnd - 1] == space || line[valueEnd - 1] == tab { valueEnd -= 1 }
        let value = line[valueStart..<valueEnd]
        guard value.allSatisfy({ $0 == tab || $0 >= 0x20 && $0 != 0x7F }) else { return nil }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    private static func framing(
        headers: HTTPHeaders,
        version: HTTPRequest.Version,
        maxBodyBytes: Int
    ) -> Result<BodyFraming, Rejection> {
        let transferEncodings = headers.values(for: "transfer-encoding")
        let contentLengths = headers.values(for: "content-length")
        if !transferEncodings.isEmpty {
            // RFC 9112 §6.1: both headers together is how requests get smuggled; refuse and close.
            guard contentLengths.isEmpty, version == .http1_1 else { return .failure(Rejection(status: .badRequest)) }
            let codings = transferEncodings.flatMap { $0.split(separator: ",") }.map {
                $0.trimmingASCIIWhitespace().lowercased()
            }
            guard codings.last == "chunked", codings.filter({ $0 == "chunked" }).count == 1 else {
                return .failure(Rejection(status: .badRequest))
            }
            guard codings.count == 1 else { return .failure(Rejection(status: .notImplemented)) }
            return .success(.chunked)
        }
        guard !contentLengths.isEmpty else { return .success(.none) }
        var length: Int?
        for item in contentLengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let digits = item.trimmingASCIIWhitespace()
            guard !digits.isEmpty, digits.utf8.count <= 18, digits.utf8.allSatisfy(isDigit), let value = Int(digits)
            else { return .failure(Rejection(status: .badRequest)) }
            if let length, length != value { return .failure(Rejection(status: .badRequest)) }
            length = value
        }
        guard let length else { return .failure(Rejection(status: .badRequest)) }
        if length > maxBodyBytes { return .failure(Rejection(status: .contentTooLarge)) }
        return .success(length == 0 ? .none : .length(length))
    }

    /// The most bytes after the request line's CR an incomplete head may hold: the fields' limit measured as a whole
    /// head's is (from that CR to where the closing CRLF CRLF starts, so 4 more), and up to three bytes of that
    /// CRLF CRLF, which the measure leaves out.
    var maxBytesAfterLineWhileIncomplete: Int { limits.maxHeaderBytes + 4 + 3 }

    /// Where the request line starts: RFC 9112 §2.2 ignores empty lines before it (some clients add CRLF after
    /// a body), up to four of them here.
    static func requestLineStart(_ bytes: ArraySlice<UInt8>) -> Int {
        var start = bytes.startIndex
        while bytes.endIndex - start >= 2, bytes[start] == cr, bytes[start + 1] == lf, start - bytes.startIndex < 8 {
            start += 2
        }
        return start
    }

    static func findCRLF(_ bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        var index = start
        let last = bytes.endIndex - 1
        while index < last {
            if bytes[index] == cr && bytes[index + 1] == lf { return index }
            index += 1
        }
        return nil
    }

    /// The index of the CRLF CRLF that ends the head, searching from the CRLF that ends the request line.
    private static func findHeadEnd(_ bytes: ArraySlice<UInt8>, from lineEnd: Int) -> Int? {
        var index = lineEnd
        let last = bytes.endIndex - 3
        while index < last {
            if bytes[index] == cr && bytes[index + 1] == lf && bytes[index + 2] == cr && bytes[index + 3] == lf {
                return index
            }
            index += 1
        }
        return nil
    }
}

private let cr = UInt8(ascii: "\r")
private let lf = UInt8(ascii: "\n")
private let space = UInt8(ascii: " ")
private let tab = UInt8(ascii: "\t")
private let slash = UInt8(ascii: "/")
private let dot = UInt8(ascii: ".")
private let httpSlash = Array("HTTP/".utf8)

private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

/// tchar from RFC 9110 §5.6.2.
func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), 0x30...0x39: true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
        UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
        UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
        true
    default: false
    }
}
