import Testing

@testable import HTTPServer

/// A head fed in pieces and judged with what the earlier pieces found (`HeadScan`) gets, after every piece, the
/// answer a parse of the whole buffer gives: the scan only spares reading the same bytes again.
@Suite("HeadScan")
struct HeadScanTests {
    var parser: RequestParser {
        var limits = RequestParser.Limits()
        limits.maxRequestLineBytes = 64
        limits.maxHeaderBytes = 128
        limits.maxHeaderCount = 5
        return RequestParser(limits: limits)
    }

    /// Heads that complete, are refused part way (every rule that can refuse an incomplete head), or pass a
    /// limit only once enough of them arrived.
    static let heads = [
        "GET /a?b=c HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n\r\n",
        "\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
        "\r\n GET / HTTP/1.1\r\n",
        " GET / HTTP/1.1\r\n",
        "G@T / HTTP/1.1\r\n",
        "GE\rT / HTTP/1.1\r\n",
        "GET / HTTP/1.1\nHost: x\n\n",
        "GET / HTTP/1.1\r\nHost: x\nY: z\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\rY: z\r\n\r\n",
        "GET / HTTP/1.1\r\n\n",
        "GET /" + String(repeating: "a", count: 80) + " HTTP/1.1\r\nHost: x\r\n\r\n",
        "\r\n\r\nGET /" + String(repeating: "a", count: 56) + " HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + String(repeating: "b", count: 150) + "\r\n\r\n",
        String(repeating: "G", count: 80),
        "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\nF: 6\r\n\r\n",
        "\u{16}\u{03}\u{01}\u{02}\u{00}",
        "GET / HTTP/1.1\r\nHost: x\r\n" + String(repeating: "\r", count: 12),
        "GET / HTTP/1.1\r\nHost: x\r\n" + String(repeating: "a\r", count: 6),
        "GET / HTTP/1.1\r\n" + String(repeating: "a:b\r\n", count: 12) + "\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\n\r",
        "GETa/healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/3.0\r\nHost: x\r\n\r\n",
    ]

    @Test(arguments: heads, [1, 2, 3, 7])
    func aHeadInPiecesIsJudgedAsItsWholeBufferIs(head: String, pieceLength: Int) {
        let bytes = Array(head.utf8)
        var scan = HeadScan()
        var end = 0
        while end < bytes.count {
            end = min(end + pieceLength, bytes.count)
            let whole = parser.parseHead(bytes[..<end])
            let scanned = parser.parseHead(bytes[..<end], scan: &scan)
            #expect(scanned == whole, "\(head.debugDescription) judged differently after \(end) bytes")
            if whole != .incomplete { break }
        }
    }

    /// Offsets count from the buffer's first unread byte, wherever it sits in its storage.
    @Test func aBufferThatStartsPartWayIsScannedFromItsOwnStart() {
        let bytes = Array("XXXXGET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        var scan = HeadScan()
        for end in 5...bytes.count {
            let result = parser.parseHead(bytes[4..<end], scan: &scan)
            #expect(result == parser.parseHead(bytes[4..<end]))
        }
    }
}
