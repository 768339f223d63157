// libFuzzer target `http-request`: the request parser on whatever a client sends, as one buffer of pipelined
// requests, then what routes read from each request (path segments, query items, keep-alive), and the head
// judged a byte at a time.
import HTTPServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var limits = RequestParser.Limits()
    limits.maxBodyBytes = 4096
    let parser = RequestParser(limits: limits)
    var rest = bytes[...]
    while case .request(let request, let consumed) = parser.parseRequest(rest) {
        // A request always uses bytes, or the connection would loop on the same buffer forever.
        precondition(consumed > 0 && consumed <= rest.count, "parser consumed \(consumed) of \(rest.count) bytes")
        // A request is judged the same whatever part of it has arrived: no prefix of it is refused (the parser
        // refuses some heads before they end, so a prefix must never look like one of those).
        // Cut anywhere, and at each line end's CR and LF, where limits and terminators are judged.
        let lineEnds = rest.prefix(consumed).indices.filter { rest[$0] == 13 || rest[$0] == 10 }.prefix(64)
        let cuts = Set(stride(from: 0, to: consumed, by: max(1, consumed / 32))).union(
            lineEnds.map { $0 - rest.startIndex }
        )
        for length in cuts.sorted() {
            if case .invalid(let status) = parser.parseRequest(rest.prefix(length)) {
                preconditionFailure("\(length) of a request's \(consumed) bytes refused with \(status.code)")
            }
        }
        rest = rest.dropFirst(consumed)
        for segment in request.path.split(separator: "/") { _ = FormDecoding.decodePathSegment(segment) }
        _ = request.queryItems
        _ = request.keepAlive
        _ = request.headers["host"]
    }
    // Fed a byte at a time and judged with what the earlier bytes found (`HeadScan`), the head is judged after
    // every byte as its whole buffer is (the first 600 bytes: each step parses the buffer whole to compare).
    var scan = HeadScan()
    for end in bytes.indices.prefix(600) {
        let whole = parser.parseHead(bytes[...end])
        let scanned = parser.parseHead(bytes[...end], scan: &scan)
        precondition(scanned == whole, "\(end + 1) bytes judged \(scanned) a byte at a time, \(whole) whole")
        if whole != .incomplete { break }
    }
    return 0
}
