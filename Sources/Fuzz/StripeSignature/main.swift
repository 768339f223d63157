// libFuzzer target `stripe-signature`: the `Stripe-Signature` header of an unauthenticated webhook delivery,
// checked over its body. The input is the header, a line feed, then the body.
import Crypto
import Payments

/// A fixed secret and time (2026-01-01): the seeds carry headers signed with them, so the fuzzer starts from a
/// delivery that verifies.
let signature = TimestampedHMAC.stripe(secret: "whsec_fuzz")
let now: Int64 = 1_767_225_600

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
    let header = String(decoding: bytes[..<newline], as: UTF8.self)
    let body = Array(bytes[min(newline + 1, bytes.endIndex)...])
    _ = try? signature.verify(header: header, body: body, nowSeconds: now)
    return 0
}
