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
        rest = rest.dropFirst(consumed)
        for segment in request.path.split(separator: "/") { _ = FormDecoding.decodePathSegment(segment) }
        _ = request.queryItems
        _ = request.keepAlive
        _ = request.headers["host"]
    }
    return 0
}
