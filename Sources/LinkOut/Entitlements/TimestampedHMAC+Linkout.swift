import Crypto

extension TimestampedHMAC {
    /// The `Linkout-Signature` header of linkout's own entitlement webhooks: Stripe's scheme under another name
    /// (`t=<unix seconds>,v1=<hex>`, the HMAC of `"<t>.<raw body>"` keyed with `webhooks.secret`), so a receiver
    /// that already checks Stripe's, or `openssl dgst -sha256 -hmac`, checks ours. The README tells receivers to
    /// refuse a `t` more than five minutes old; the tolerance says the same.
    static func linkout(secret: String) -> TimestampedHMAC {
        TimestampedHMAC(
            secret: secret,
            format: HeaderFormat(name: "Linkout-Signature", separator: ",", timestampKey: "t", signatureKey: "v1"),
            joiner: ".",
            tolerance: .past(seconds: 300)
        )
    }
}
