public import Crypto

extension TimestampedHMAC {
    /// The `Stripe-Signature` header of a webhook delivery (Stripe: "Check the webhook signatures"), checked before anything in the body is
    /// believed: `t=<unix>,v1=<hex>[,v1=<hex>…][,v0=…]`, where each `v1` is the lowercase hex HMAC-SHA256 of
    /// `"{t}.{raw body}"` keyed with the whole endpoint secret (`whsec_…`). Any `v1` may match (a rolled secret
    /// stays valid for a while); other schemes such as test events' `v0` are ignored.
    ///
    /// Stripe's SDKs allow 300 s; only too-old timestamps are refused, future ones pass, as in every SDK.
    public static func stripe(secret: String, toleranceSeconds: Int64 = 300) -> TimestampedHMAC {
        TimestampedHMAC(
            secret: secret,
            format: HeaderFormat(name: "Stripe-Signature", separator: ",", timestampKey: "t", signatureKey: "v1"),
            joiner: ".",
            tolerance: .past(seconds: toleranceSeconds)
        )
    }
}
