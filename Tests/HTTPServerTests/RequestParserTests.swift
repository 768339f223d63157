import Testing

@testable import HTTPServer

@Suite("RequestParser")
struct RequestParserTests {
    var limits: RequestParser.Limits {
        var limits = RequestParser.Limits()
        limits.maxRequestLineBytes = 64
        limits.maxHeaderBytes = 256
        limits.maxHeaderCount = 5
        limits.maxBodyBytes = 32
        return limits
    }

    func parse(_ text: String) -> RequestParser.RequestResult {
        RequestParser(limits: limits).parseRequest(Array(text.utf8)[...])
    }

    func status(_ text: String) -> Int? {
        if case .invalid(let status) = parse(text) { return status.code }
        return nil
    }

    func request(_ text: String) throws -> (HTTPRequest, Int) {
        guard case .request(let request, let consumed) = parse(text) else {
            throw ParseFailure(description: "no request from \(text.debugDescription)")
        }
        return (request, consumed)
    }

    struct ParseFailure: Error, CustomStringConvertible {
        var description: String
    }

    @Test func parsesRequestLineHeadersAndQuery() throws {
        let text = "GET /a/b?x=1&y=%41+b HTTP/1.1\r\nHost: h\r\nX-Thing:  v  \r\n\r\n"
        let (request, consumed) = try request(text)
        #expect(consumed == text.utf8.count)
        #expect(request.method == "GET")
        #expect(request.path == "/a/b")
        #expect(request.queryValue("y") == "A b")
        #expect(request.headers["host"] == "h")
        #expect(request.headers["X-THING"] == "v")
        #expect(request.version == .http1_1)
        #expect(request.keepAlive)
    }

    @Test func keepAliveFollowsVersionAndConnectionHeader() throws {
        #expect(try !request("GET / HTTP/1.0\r\n\r\n").0.keepAlive)
        #expect(try request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").0.keepAlive)
        #expect(try !request("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").0.keepAlive)
    }

    @Test func waitsForTheWholeHeadAndBody() {
        #expect(status("GET / HTTP/1.1\r\nHost: h\r\n") == nil)
        if case .incomplete = parse("GET / HTTP/1.1\r\nHost: h\r\n") {
        } else {
            Issue.record("head should be incomplete")
        }
        if case .incomplete = parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nabc") {
        } else {
            Issue.record("body should be incomplete")
        }
    }

    @Test func readsContentLengthBodyAndLeavesPipelinedBytes() throws {
        let text = "POST /e HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nabcdeGET"
        let (request, consumed) = try request(text)
        #expect(request.body == Array("abcde".utf8))
        #expect(consumed == text.utf8.count - 3)
    }

    @Test(
        "takes a Host of every shape a host and port have",
        arguments: [
            "example.com", "example.com:8080", "EXAMPLE.com:", "127.0.0.1:65535", "[::1]", "[::1]:8080",
            "[2001:db8::192.0.2.1]", "[v1.fe80::a+en1]", "a%41b", "xn--bcher-kva.example", "h_1~x",
            "[fe80::1%25eth0]:8080", "localhost.", "[::ffff:127.0.0.1]",
        ]
    )
    func takesHosts(host: String) throws {
        #expect(try request("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n").0.headers["host"] == host)
    }

    @Test func acceptsIdenticalDuplicateContentLengths() throws {
        let (request, _) = try request(
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 3\r\nContent-Length: 3\r\n\r\nabc"
        )
        #expect(request.body == Array("abc".utf8))
    }

    @Test func decodesChunkedBodiesWithExtensionsAndTrailers() throws {
        let text =
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\nNEXT"
        let (request, consumed) = try request(text)
        #expect(request.body == Array("hello 0123456789".utf8))
        #expect(consumed == text.utf8.count - 4)
    }

    /// A head that can never become a request is refused at once, not held until the read timeout (a 408 after
    /// 10 s): lines ended by bare LFs, a TLS handshake or binary sent to the plain port, a space before the
    /// method. What may still complete (an empty line's CR whose LF is on the way) waits.
    @Test func headsThatCannotCompleteAreRefusedAtOnce() {
        for text in [
            "GET /healthz HTTP/1.1\nHost: x\n\n", "GET / HTTP/1.1\r\nHost: x\nY: z", "\u{16}\u{03}\u{01}\u{02}",
            " GET / HTTP/1.1", "GE\rT", "\r\n\u{01}",
            // A bare LF first after the request line (it waited for the head timeout).
            "GET / HTTP/1.1\r\n\n",
            // A bare CR among the fields (refused once the head was complete; a flood of them, sent a byte at a
            // time, was parsed whole for every byte).
            "GET / HTTP/1.1\r\nHost: x\rY", "GET / HTTP/1.1\r\n\r\r",
            // A bad request line whose CRLF came with it, before the head's end (it waited for the head's end
            // or the timeout, where the same bytes sent one at a time were refused at once).
            "GET /a\nb HTTP/1.1\r\nH", "GETa/healthz HTTP/1.1\r\nHost: x\r\n", "GET /healthz HTTP/1.1\r\r\n",
        ] {
            #expect(status(text) == 400, "\(text.debugDescription)")
        }
        for text in [
            "", "G", "GET / HTTP/1.1\r", "\r", "\r\n", "GET / HTTP/1.1\r\nHost: x\r", "GET / HTTP/1.1\r\nHost: x\r\n",
        ] {
            if case .incomplete = parse(text) {
            } else {
                Issue.record("\(text.debugDescription) should wait for more")
            }
        }
    }

    /// A head at its size limits is taken, and so is every part of it as it arrives: a request line of the
    /// longest length whose CR has come but not its LF, a head whose closing CRLF CRLF is all but its last byte.
    @Test func aHeadAtItsLimitsIsTakenWhicheverPartHasArrived() throws {
        let line = "GET /" + String(repeating: "a", count: limits.maxRequestLineBytes - 14) + " HTTP/1.1"
        #expect(line.utf8.count == limits.maxRequestLineBytes)
        // From the request line's CRLF to the closing CRLF CRLF: "\r\nHost: h\r\n" and this field, 4 bytes over
        // the fields' limit, as the parser measures them.
        let field = "X: " + String(repeating: "b", count: limits.maxHeaderBytes + 4 - 11 - 3)
        let head = line + "\r\nHost: h\r\n" + field + "\r\n\r\n"
        let bytes = Array(head.utf8)
        #expect(try request(head).1 == bytes.count)
        for length in 0..<bytes.count {
            if case .invalid(let status) = RequestParser(limits: limits).parseRequest(bytes[..<length]) {
                Issue.record("\(length) of \(bytes.count) bytes refused with \(status.code)")
            }
        }
    }

    /// A chunk-size or trailer line ended by a bare LF is refused at once: its CRLF never comes, and waiting for
    /// it held the connection until the body timeout (30 s) before a 408. A trailer line with a bare LF inside is
    /// refused too, so a line is judged the same whether its CRLF has arrived yet or not (found by fuzzing).
    @Test func chunkLinesEndedByABareLineFeedAreRefusedAtOnce() {
        for body in ["4\nabcd\n0\n\n", "4", "4\r\nabcd\r\n0\r\nX-T: 1\n", "0\r\nX-T: 1\nY: 2\r\n\r\n"] {
            let result = BodyReader.decode(Array(body.utf8)[...], framing: .chunked, maxBodyBytes: 1024)
            #expect(result == (body == "4" ? .incomplete : .invalid(.badRequest)), "\(body.debugDescription)")
        }
    }

    /// Size lines, extensions, CRLFs and trailers count against the limit, with an allowance of 1 KiB plus 1/16
    /// of it: 300 one-byte chunks fit a 1 KiB limit, 400 are a 413 though their data alone would fit.
    @Test func chunkFramingCountsAgainstTheLimit() {
        func decode(chunks: Int, trailer: String = "") -> BodyReader.Result {
            let body = String(repeating: "1\r\na\r\n", count: chunks) + "0\r\n" + trailer + "\r\n"
            return BodyReader.decode(Array(body.utf8)[...], framing: .chunked, maxBodyBytes: 1024)
        }
        #expect(BodyReader.framingAllowance(for: 1024) == 1088)
        guard case .body(let body, _) = decode(chunks: 300) else {
            Issue.record("300 one-byte chunks should fit")
            return
        }
        #expect(body.count == 300)
        #expect(decode(chunks: 400) == .invalid(.contentTooLarge))
        // Trailers count too: 200 chunks leave room for a 400-byte trailer, not for a 1000-byte one.
        let trailer = { (length: Int) in "X: " + String(repeating: "t", count: length) + "\r\n" }
        if case .body = decode(chunks: 200, trailer: trailer(400)) {
        } else {
            Issue.record("a 400-byte trailer should fit")
        }
        #expect(decode(chunks: 200, trailer: trailer(1000)) == .invalid(.contentTooLarge))
    }

    /// The reader takes whatever each read returned: split anywhere, a body decodes exactly as it does at once.
    @Test func aBodyReadInPiecesDecodesAsAtOnce() {
        let bodies: [(RequestParser.BodyFraming, String)] = [
            (.chunked, "5;name=value\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\nNEXT"),
            (.length(11), "hello worldNEXT"),
        ]
        for (framing, text) in bodies {
            let bytes = Array(text.utf8)
            let whole = BodyReader.decode(bytes[...], framing: framing, maxBodyBytes: 1024)
            for split in 0...bytes.count {
                var reader = BodyReader(framing: framing, maxBodyBytes: 1024)
                var consumed = 0
                var progress = BodyReader.Progress.needsMore
                // What a read leaves unused (a partial line) is offered again with the next piece.
                for end in [split, bytes.count] where progress == .needsMore {
                    let (used, next) = reader.read(bytes[consumed..<end])
                    consumed += used
                    progress = next
                }
                #expect(progress == .done, "split at \(split)")
                #expect(BodyReader.Result.body(reader.body, consumed: consumed) == whole, "split at \(split)")
            }
        }
    }

    /// A body's buffer grows to its declared length and no further (plain appends doubled it).
    @Test func aBodyBufferNeverGrowsPastItsLength() {
        let length = 300_000
        var reader = BodyReader(framing: .length(length), maxBodyBytes: 1 << 20)
        let piece = [UInt8](repeating: 7, count: 65_536)
        var read = 0
        while read < length {
            let (used, _) = reader.read(piece[..<min(piece.count, length - read)])
            read += used
        }
        #expect(reader.body.count == length)
        #expect(reader.body.capacity < length + 8192)
    }

    @Test func skipsEmptyLinesBeforeTheRequestLine() throws {
        let text = "\r\n\r\nGET /x HTTP/1.1\r\nHost: h\r\n\r\n"
        let (request, consumed) = try request(text)
        #expect(request.path == "/x")
        #expect(consumed == text.utf8.count)
    }

    @Test func expectContinueIsRecognised() {
        let head = RequestParser(limits: limits).parseHead(
            Array("PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n".utf8)[...]
        )
        guard case .head(let parsed, _) = head else {
            Issue.record("expected a head")
            return
        }
        #expect(parsed.expectsContinue)
        #expect(parsed.framing == .length(4))
    }

    @Test(
        "rejects malformed, oversized and smuggling-shaped requests",
        arguments: [
            // malformed
            ("GARBAGE\r\n\r\n", 400),
            ("GET /\r\nHost: h\r\n\r\n", 400),
            ("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET x/ HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET http:///a HTTP/1.1\r\nHost: h\r\n\r\n", 400),  // absolute-form without a host
            ("GET http://user@x/ HTTP/1.1\r\nHost: h\r\n\r\n", 400),  // userinfo
            ("GET ftp://x/ HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET http:/x HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("G@T / HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\n\r\n", 400),  // HTTP/1.1 without Host
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: x y\r\n\r\n", 400),  // not a host
            ("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: \u{FF}\r\n\r\n", 400),
            ("GET / HTTP/1.0\r\nHost: a@b\r\n\r\n", 400),
            ("GET / HTTP/1.0\r\nHost: a\r\nHost: x y\r\n\r\n", 400),
            ("GET http://a\"b/ HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            // a Host of the right characters in no host's shape
            ("GET / HTTP/1.1\r\nHost: a.example,b.example\r\n\r\n", 400),  // two joined by a proxy
            ("GET / HTTP/1.1\r\nHost: example.com:80:80\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: example.com:99999\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: example.com:8o\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: []\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: [::1]evil.com\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: [example.com]\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: [v1.a,b]\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: [vzz]\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: [fe80::1%25]\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: [fe80::1%eth0]\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: [fe80::1%25eth0+x]\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a%00b\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a%zzb\r\n\r\n", 400),
            ("GET http://a:1:2/ HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            // a fragment, which a proxy reads as the end of the path
            ("GET http://x#metrics HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET http://x#?externalPurchaseToken=e30&bundleId=a HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET /#admin/tokens HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            ("GET /a?b#c HTTP/1.1\r\nHost: h\r\n\r\n", 400),
            // an expectation besides 100-continue, in a second field
            ("PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nExpect: foo\r\nContent-Length: 1\r\n\r\n", 417),
            // a field that is not a list, twice: read one way here and another by a proxy
            ("GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer a\r\nauthorization: Bearer b\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Type: a/b\r\nContent-Type: c/d\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: h\r\nStripe-Signature: t=1\r\nStripe-Signature: t=2\r\n\r\n", 400),
            ("GET / HTTP/1.x\r\nHost: h\r\n\r\n", 400),
            ("GET / HTTP/1.1\nHost: h\n\n\r\n\r\n", 400),  // bare LF line ends
            // unsupported version
            ("GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505),
            ("GET / HTTP/0.9\r\nHost: h\r\n\r\n", 505),
            ("GET / HTTP/3.1\r\nHost: h\r\n\r\n", 505),
            // smuggling shapes
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1, 2\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x10\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n folded\r\n\r\n", 400),  // obs-fold
            ("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n\tfolded\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400),  // space before colon
            ("GET / HTTP/1.1\r\nHost: h\r\nBad Name: v\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: h\r\nB(d: v\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: h\r\nX: a\u{0}b\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n", 400),
            ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
            ("GET / HTTP/1.1\r\nHost: h\r\nExpect: something-else\r\n\r\n", 417),
            // chunked framing errors
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nZ\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbad trailer\r\n\r\n", 400),
            // limits
            ("GET /" + String(repeating: "a", count: 100) + " HTTP/1.1\r\nHost: h\r\n\r\n", 414),
            ("GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "a", count: 300) + "\r\n\r\n", 431),
            ("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n\r\n", 431),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 33\r\n\r\n", 413),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n21\r\n", 413),
            (
                "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n"
                    + "11\r\n", 413
            ),
        ]
    )
    func rejects(request: String, status expected: Int) {
        #expect(status(request) == expected, "\(request.debugDescription)")
    }

    @Test func refusesOverlongLinesBeforeTheyEnd() {
        #expect(status("GET /" + String(repeating: "a", count: 100)) == 414)
        #expect(status("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 400)) == 431)
    }

    @Test func laterHTTP1MinorVersionsAreReadAsHTTP11() throws {
        #expect(try request("GET / HTTP/1.2\r\nHost: h\r\n\r\n").0.version == .http1_1)
        #expect(try request("GET / HTTP/1.9\r\nHost: h\r\n\r\n").0.version == .http1_1)
        #expect(try request("GET / HTTP/1.0\r\n\r\n").0.version == .http1_0)
        // Read as 1.1, so Host is required as in 1.1.
        #expect(status("GET / HTTP/1.2\r\n\r\n") == 400)
    }

    @Test func absoluteFormTargetsBecomeOriginFormAndTheirAuthorityTheHost() throws {
        let (plain, _) = try request("GET http://example.com/a/b?x=1 HTTP/1.1\r\nHost: other\r\n\r\n")
        #expect(plain.target == "/a/b?x=1")
        #expect(plain.path == "/a/b")
        #expect(plain.headers.values(for: "host") == ["example.com"])
        let (secure, _) = try request("GET HTTPS://example.com:8443 HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(secure.target == "/")
        #expect(secure.headers["host"] == "example.com:8443")
        #expect(try request("GET http://h?q=1 HTTP/1.1\r\nHost: h\r\n\r\n").0.target == "/?q=1")
    }

    @Test func hostsOfEveryShapeAreTaken() throws {
        for host in ["[::1]:8080", "127.0.0.1:80", "xn--bcher-kva.example", "a_b.local", "", "%41.example"] {
            #expect(try request("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n").0.headers["host"] == host)
        }
    }
}
