// libFuzzer target `token`: the externalPurchaseToken query value (Base64URL JSON from the App Store, or from
// anyone) through the decoder and the validator every landing visit runs. The input is tried as it is and also
// Base64URL-encoded first, so the fuzzer can mutate the JSON inside a token directly; the raw bytes also go
// through `JSONGrammar`.
import Domain
import ExternalPurchase

/// The validator as a server configured for Apple's example app would run it, at a fixed time (2026-01-01).
let validator = TokenValidator(apps: ["com.example": 1_234_567_890])
let now: Int64 = 1_767_225_600_000

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for text in [String(decoding: bytes, as: UTF8.self), Base64URL.encode(bytes)] {
        if case .success(let token) = TokenDecoder.decode(text) {
            _ = TokenDecoder.isExternalPurchaseId(token.externalPurchaseId.rawValue)
            _ = validator.validate(token, queryBundleId: "com.example", nowMilliseconds: now)
            _ = validator.validate(token, queryBundleId: nil, nowMilliseconds: now)
        }
    }
    _ = Base64URL.decode(bytes)
    // The grammar check every JSON text from outside passes (JSON bodies too), on the raw bytes.
    _ = JSONGrammar.accepts(bytes)
    return 0
}
