import Crypto

/// The signature on an entitlement webhook: `Linkout-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
/// "<t>.<body>">`, the scheme payment providers use, so a receiver checks it with `openssl dgst -sha256 -hmac`
/// and refuses old timestamps to stop replays.
struct WebhookSignature: Sendable {
    let secret: String

    func header(body: [UInt8], timestamp: Int64) -> String {
        let mac = HMACSHA256(key: Array(secret.utf8)).authenticate(bytes: Array("\(timestamp).".utf8) + body)
        let hex = mac.map { byte in
            let digits = String(byte, radix: 16)
            return byte < 16 ? "0" + digits : digits
        }.joined()
        return "t=\(timestamp),v1=\(hex)"
    }
}
