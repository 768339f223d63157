// libFuzzer entry point for everything that reads untrusted bytes: the HTTP parser and body decoder, form
// decoding, the token decoder and the journal reader. Built only by scripts/fuzz.sh (--sanitize=fuzzer); a
// plain build gets an executable that does nothing.
import ExternalPurchase
import HTTPServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var limits = RequestParser.Limits()
    limits.maxBodyBytes = 4096
    let parser = RequestParser(limits: limits)
    if case .request(let request, _) = parser.parseRequest(bytes[...]) {
        _ = request.queryItems
        _ = request.keepAlive
        _ = FormDecoding.decodePathSegment(request.path)
    }
    fuzzChunkedInPieces(bytes)
    let text = String(decoding: bytes, as: UTF8.self)
    _ = FormDecoding.items(Substring(text))
    _ = TokenDecoder.decode(text)
    _ = Base64URL.decode(bytes)
    return 0
}

/// A chunked body decodes the same whether it arrives at once or in two pieces split anywhere (the connection feeds
/// the reader whatever each read returned, leaving a partial line in place for the next).
private func fuzzChunkedInPieces(_ bytes: [UInt8]) {
    let whole = BodyReader.decode(bytes[...], framing: .chunked, maxBodyBytes: 4096)
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
}
