public import Crypto

extension TimestampedHMAC {
    /// The `Paddle-Signature` header of a notification (Paddle: "Verify webhook signatures"), checked before anything in the body is
    /// believed: `ts=<unix seconds>;h1=<hex>[;h1=<hex>…]`, where each `h1` is the lowercase hex HMAC-SHA256 of
    /// `"<ts>:"` followed by the raw body, keyed with the whole notification secret (`pdl_ntfset_…`). Any `h1` may
    /// match (Paddle's Python SDK parses several, for a secret being rotated); unknown keys are ignored.
    ///
    /// Tolerance: Paddle's docs and SDKs refuse a `ts` more than 5 s from now. linkout allows 60 s either way by
    /// default (`payments.paddle.webhookToleranceSeconds`): a self-hosted server's clock may drift by seconds, a
    /// buffering proxy may hold a body, and a delivery refused for the clock is retried by Paddle only 60 times over
    /// three days (3 times in 15 minutes in the sandbox). Shortening the window buys nothing against replay, because
    /// every notification is stored and deduplicated by its `event_id` before it is acted on: a replayed delivery
    /// within the window is a duplicate and changes nothing. The window only bounds how long a captured delivery is
    /// accepted at all.
    public static func paddle(secret: String, toleranceSeconds: Int64 = paddleDefaultToleranceSeconds)
        -> TimestampedHMAC
    {
        TimestampedHMAC(
            secret: secret,
            format: HeaderFormat(name: "Paddle-Signature", separator: ";", timestampKey: "ts", signatureKey: "h1"),
            joiner: ":",
            tolerance: .eitherWay(seconds: toleranceSeconds)
        )
    }

    public static let paddleDefaultToleranceSeconds: Int64 = 60
}
