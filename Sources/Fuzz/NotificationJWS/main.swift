// libFuzzer target `notification-jws`: the `signedPayload` of an App Store Server Notification, anyone's to send,
// through `SignedPayloadVerifier` (JWS parts, header, x5c, the X.509 chain to a pinned root at signedDate, the
// Apple marker OIDs, the ES256 signature) with the fixed test root the seeds were signed under.
//
// An input that starts with `{` is taken apart instead: header JSON, NUL, payload JSON, NUL, signature bytes,
// each Base64URL-encoded into a JWS, so the fuzzer mutates the JSON and the x5c list rather than Base64. The
// payload is also decoded as a notification, as the verifier does once every check passed (a mutated payload
// never gets past the signature).
import ExternalPurchase
import Foundation
import LinkOutFuzzSupport

let verifier = SignedPayloadVerifier(trustedRoots: [FuzzChain.root])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard bytes.first == UInt8(ascii: "{") else {
        _ = try? verifier.verify(String(decoding: bytes, as: UTF8.self))
        return 0
    }
    let parts = bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count == 3 else { return 0 }
    let jws = parts.map { Base64URL.encode($0) }.joined(separator: ".")
    _ = try? verifier.verify(jws)
    _ = try? JSONDecoder().decode(NotificationPayload.self, from: Data(parts[1]))
    return 0
}
