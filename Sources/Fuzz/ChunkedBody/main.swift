// libFuzzer target `chunked-body`: chunked transfer coding (chunk sizes, extensions, trailers) after a head the
// parser accepted, with a small body limit so the 413 path is reached too. The body must decode the same whether
// it arrives at once or in two pieces split anywhere (the connection feeds the reader whatever each read returned,
// leaving a partial line in place for the next).
import HTTPServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = BodyReader.decode(bytes[...], framing: .chunked, maxBodyBytes: 4096)
    if case .body(let body, let consumed) = whole {
        precondition(consumed > 0 && consumed <= bytes.count, "decoder consumed \(consumed) of \(bytes.count) bytes")
        precondition(body.count <= 4096 && body.count < consumed, "body of \(body.count) bytes from \(consumed)")
    }
    let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    var reader = BodyReader(framing: .chunked, maxBodyBytes: 4096)
    var (consumed, progress) = reader.read(bytes[..<split])
    if progress == .needsMore {
        let (more, next) = reader.read(bytes[consumed...])
        consumed += more
        progress = next
    }
    switch (whole, progress) {
    case (.body(let body, let wholeConsumed), .done):
        precondition(body == reader.body && wholeConsumed == consumed, "pieces decoded differently")
    case (.invalid, .invalid):
        // Both refused; the status may differ (a partial line can pass the size budget before it is malformed).
        break
    case (.incomplete, .needsMore):
        break
    default:
        preconditionFailure("pieces decoded differently")
    }
    return 0
}
