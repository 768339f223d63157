import Crypto
public import Lifecycle

/// Checks the `Stripe-Signature` header of a webhook delivery (Stripe: "Check the webhook signatures"), before anything
/// in the body is believed: `t=<unix>,v1=<hex>[,v1=<hex>…][,v0=…]`, where each `v1` is the lowercase hex HMAC-SHA256 of
/// `"{t}.{raw body}"` keyed with the whole endpoint secret as UTF-8 (`whsec_` included, no base64). Any `v1` may match
/// (a rolled secret stays valid for a while); other schemes such as test events' `v0` are ignored.
public struct StripeWebhookSignature: Sendable {
    /// Why a delivery is not believed. The cases name the problem, never the secret or a signature.
    public enum Failure: String, Error, Sendable, Equatable, CustomStringConvertible {
        case missingHeader = "missing Stripe-Signature header"
        case malformedHeader = "malformed Stripe-Signature header"
        case noV1Signature = "no v1 signature in Stripe-Signature"
        case timestampTooOld = "Stripe-Signature timestamp is older than the tolerance"
        case noMatchingSignature = "no v1 signature matches the body"

        public var description: String { rawValue }
    }

    private let mac: HMACSHA256
    /// How old a signature may be, in seconds. Stripe's SDKs use 300; only too-old timestamps are refused, future ones
    /// pass, as in every SDK (Stripe's Python, Node and Go SDKs). This bounds how long a captured delivery can be
    /// replayed.
    public let toleranceSeconds: Int64

    /// `secret` is the endpoint's signing secret (`whsec_…`).
    public init(secret: String, toleranceSeconds: Int64 = 300) {
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
        for item in header.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { throw .malformedHeader }
            let key = pair[0].trimmingSpaces()
            let value = pair[1].trimmingSpaces()
            switch key {
            case "t":
                guard timestamp == nil, let seconds = Int64(value) else { throw .malformedHeader }
                timestamp = seconds
            case "v1":
                // A v1 that is not 64 hex digits can never match; it is skipped like an unknown scheme.
                if let bytes = Hex.decodeLowercase(value), bytes.count == 32 { signatures.append(bytes) }
            default:
                continue
            }
        }
        guard let timestamp else { throw .malformedHeader }
        guard !signatures.isEmpty else { throw .noV1Signature }
        // A timestamp so far back that the age overflows is too old as well (Int64.min stopped the server).
        let (age, overflow) = nowSeconds.subtractingReportingOverflow(timestamp)
        guard !overflow, age <= toleranceSeconds else { throw .timestampTooOld }
        let expected = mac.authenticate(bytes: Array("\(timestamp).".utf8) + body)
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

    /// The header Stripe would send for `body` at `timestamp`: `t=…,v1=…`. For tests and fake servers.
    public static func sign(body: [UInt8], secret: String, timestamp: Int64) -> String {
        TimestampedSignature.header(body: body, secret: secret, timestamp: timestamp)
    }
}
