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
    _ = BodyDecoder.decode(bytes[...], framing: .chunked, maxBodyBytes: 4096)
    let text = String(decoding: bytes, as: UTF8.self)
    _ = FormDecoding.items(Substring(text))
    _ = TokenDecoder.decode(text)
    _ = Base64URL.decode(bytes)
    return 0
}
