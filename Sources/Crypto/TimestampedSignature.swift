/// The webhook signature scheme Stripe uses and linkout's own entitlement webhooks use too:
/// `t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with the whole secret as UTF-8. A
/// receiver checks it with `openssl dgst -sha256 -hmac` and refuses old timestamps to stop replays.
public enum TimestampedSignature {
    public static func header(body: [UInt8], secret: String, timestamp: Int64) -> String {
        "t=\(timestamp),v1=\(Hex.encode(mac(body: body, secret: secret, timestamp: timestamp)))"
    }

    /// The MAC the `v1` value carries.
    public static func mac(body: [UInt8], secret: String, timestamp: Int64) -> [UInt8] {
        HMACSHA256(key: Array(secret.utf8)).authenticate(bytes: Array("\(timestamp).".utf8) + body)
    }
}
