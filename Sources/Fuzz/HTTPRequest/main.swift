// libFuzzer target `http-request`: the request parser on whatever a client sends, as one buffer of pipelined
// requests, then what routes read from each request (path segments, query items, keep-alive), and the head
// judged as it arrives in pieces.
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
    // Fed in pieces and judged with what the earlier pieces found (`HeadScan`), the head is judged after every
    // piece as its whole buffer is. The pieces are 1 to 8 bytes, cut where the input's own bytes say, and at most
    // 40 of them: each step parses the buffer whole to compare, which would otherwise take most of the target's
    // time from the parse above.
    var scan = HeadScan()
    var end = 0
    for _ in 0..<40 where end < bytes.count {
        end = min(bytes.count, end + 1 + Int(bytes[end] % 8))
        let whole = parser.parseHead(bytes[..<end])
        let scanned = parser.parseHead(bytes[..<end], scan: &scan)
        precondition(scanned == whole, "\(end) bytes judged \(scanned) in pieces, \(whole) whole")
        if whole != .incomplete { break }
    }
    return 0
}
