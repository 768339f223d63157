import Crypto
public import Lifecycle

/// Checks the `Paddle-Signature` header of a notification (Paddle: "Verify webhook signatures") before anything in the
/// body is believed: `ts=<unix seconds>;h1=<hex>[;h1=<hex>…]`, where each `h1` is the lowercase hex HMAC-SHA256 of
/// `"<ts>:"` followed by the raw body, keyed with the whole notification secret (`pdl_ntfset_…`) as UTF-8. Any `h1` may
/// match (Paddle's Python SDK parses several, for a secret being rotated); unknown keys are ignored.
///
/// Tolerance: Paddle's docs and SDKs refuse a `ts` more than 5 s from now. linkout allows 60 s either way by
/// default (`payments.paddle.webhookToleranceSeconds`): a self-hosted server's clock may drift by seconds, a
/// buffering proxy may hold a body, and a delivery refused for the clock is retried by Paddle only 60 times over
/// three days (3 times in 15 minutes in the sandbox). Shortening the window buys nothing against replay, because
/// every notification is stored and deduplicated by its `event_id` before it is acted on: a replayed delivery
/// within the window is a duplicate and changes nothing. The window only bounds how long a captured delivery is
/// accepted at all.
public struct PaddleWebhookSignature: Sendable {
    /// Why a delivery is not believed. The cases name the problem, never the secret or a signature.
    public enum Failure: String, Error, Sendable, Equatable, CustomStringConvertible {
        case missingHeader = "missing Paddle-Signature header"
        case malformedHeader = "malformed Paddle-Signature header"
        case noH1Signature = "no h1 signature in Paddle-Signature"
        case timestampOutOfTolerance = "Paddle-Signature timestamp is outside the tolerance"
        case noMatchingSignature = "no h1 signature matches the body"

        public var description: String { rawValue }
    }

    private let mac: HMACSHA256
    /// How far `ts` may be from now, either way, in seconds.
    public let toleranceSeconds: Int64

    public static let defaultToleranceSeconds: Int64 = 60

    /// `secret` is the notification destination's secret key (`pdl_ntfset_…`).
    public init(secret: String, toleranceSeconds: Int64 = PaddleWebhookSignature.defaultToleranceSeconds) {
        mac = HMACSHA256(key: Array(secret.utf8))
        self.toleranceSeconds = toleranceSeconds
    }

    /// Verifies `header` over the body exactly as received (never re-serialized) at `nowSeconds` (UNIX) and
    /// returns the signed timestamp.
    @discardableResult
    public func verify(header: String?, body: [UInt8], nowSeconds: Int64) throws(Failure) -> Int64 {
        guard let header, !header.isEmpty else { throw .missingHeader }
        var timestamp: Int64?
        var signatures: [[UInt8]] = []
        for item in header.split(separator: ";") {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { throw .malformedHeader }
            switch pair[0].trimmingSpaces() {
            case "ts":
                guard timestamp == nil, let seconds = Int64(pair[1].trimmingSpaces()) else { throw .malformedHeader }
                timestamp = seconds
            case "h1":
                // An h1 that is not 64 hex digits can never match; it is skipped like an unknown key.
                if let bytes = Hex.decodeLowercase(pair[1].trimmingSpaces()), bytes.count == 32 {
                    signatures.append(bytes)
                }
            default:
                continue
            }
        }
        guard let timestamp else { throw .malformedHeader }
        guard !signatures.isEmpty else { throw .noH1Signature }
        // A timestamp so far off that the difference overflows is out of tolerance too.
        let (age, overflow) = nowSeconds.subtractingReportingOverflow(timestamp)
        guard !overflow, age.magnitude <= toleranceSeconds.magnitude else { throw .timestampOutOfTolerance }
        let expected = mac.authenticate(bytes: Array("\(timestamp):".utf8) + body)
        // Every candidate is compared in constant time, and all of them are compared, so timing tells nothing.
        var matched = false
        for signature in signatures where HMACSHA256.constantTimeEqual(signature, expected) { matched = true }
        guard matched else { throw .noMatchingSignature }
        return timestamp
    }

    /// The same, with the time from a clock.
    @discardableResult
    public func verify(header: String?, body: [UInt8], clock: Clock) throws(Failure) -> Int64 {
        try verify(header: header, body: body, nowSeconds: clock.nowSeconds())
    }

    /// The header Paddle would send for `body` at `timestamp`: `ts=…;h1=…`. For tests and fake servers.
    public static func sign(body: [UInt8], secret: String, timestamp: Int64) -> String {
        let mac = HMACSHA256(key: Array(secret.utf8)).authenticate(bytes: Array("\(timestamp):".utf8) + body)
        return "ts=\(timestamp);h1=\(Hex.encode(mac))"
    }
}
