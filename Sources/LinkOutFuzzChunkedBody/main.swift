// libFuzzer target `chunked-body`: chunked transfer coding (chunk sizes, extensions, trailers) after a head the
// parser accepted, with a small body limit so the 413 path is reached too.
import HTTPServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if case .body(let body, let consumed) = BodyDecoder.decode(bytes[...], framing: .chunked, maxBodyBytes: 4096) {
        precondition(consumed > 0 && consumed <= bytes.count, "decoder consumed \(consumed) of \(bytes.count) bytes")
        precondition(body.count <= 4096 && body.count < consumed, "body of \(body.count) bytes from \(consumed)")
    }
    return 0
}
