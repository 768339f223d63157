// libFuzzer target `http-request`: the request parser on whatever a client sends, as one buffer of pipelined
// requests, then what routes read from each request (path segments, query items, keep-alive).
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
    return 0
}
