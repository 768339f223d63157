/// A webhook signature scheme: a timestamp, and an HMAC-SHA256 over that timestamp joined to the raw body, carried
/// together in one header of `key=value` fields. Stripe's `Stripe-Signature`, Paddle's `Paddle-Signature` and the
/// `Linkout-Signature` of linkout's own entitlement webhooks differ only in how the header is spelled, what joins
/// the timestamp to the body, and how far the timestamp may be from now; each is one value of this type
/// (`.stripe`, `.paddle` and `.linkout`, beside the code that uses them).
///
/// The HMAC is keyed with the whole secret as UTF-8 (a prefix such as `whsec_` included, no base64 decoding), as
/// all three providers document, so a receiver can check it with `openssl dgst -sha256 -hmac`. The body is signed
/// exactly as sent or received, never re-serialized.
public struct TimestampedHMAC: Sendable {
    public let format: HeaderFormat
    /// What goes between the timestamp's decimal digits and the body in the signed bytes (`.` or `:`).
    public let joiner: String
    /// How far the signed timestamp may be from now. It bounds how long a captured delivery can be replayed.
    public let tolerance: Tolerance
    private let mac: HMACSHA256

    public init(secret: String, format: HeaderFormat, joiner: String, tolerance: Tolerance) {
        // Keyed once here, not per message: a verifier lives as long as its provider.
        mac = HMACSHA256(key: Array(secret.utf8))
        self.format = format
        self.joiner = joiner
        self.tolerance = tolerance
    }

    /// The header for `body` signed at `timestamp` (UNIX seconds): the timestamp field, then one signature field.
    public func header(body: [UInt8], timestamp: Int64) -> String {
        let signature = Hex.encode(mac(body: body, timestamp: timestamp))
        return "\(format.timestampKey)=\(timestamp)\(format.separator)\(format.signatureKey)=\(signature)"
    }

    /// Verifies `header` over the body exactly as received at `nowSeconds` (UNIX) and returns the signed
    /// timestamp. Any of the header's signatures may match, so a sender rolling its secret can sign with both.
    @discardableResult
    public func verify(header: String?, body: [UInt8], nowSeconds: Int64) throws(Failure) -> Int64 {
        guard let header, !header.isEmpty else { throw failure(.missingHeader) }
        guard let fields = format.fields(of: header), let timestamp = fields.timestamp else {
            throw failure(.malformedHeader)
        }
        guard !fields.signatures.isEmpty else { throw failure(.noSignature) }
        // Checked before the MAC is computed: a stale delivery costs no hashing of its body.
        guard tolerance.admits(timestamp, nowSeconds: nowSeconds) else { throw failure(.timestampOutOfTolerance) }
        let expected = mac(body: body, timestamp: timestamp)
        // Every candidate is compared in constant time, and all of them are compared, so timing tells nothing.
        var matched = false
        for signature in fields.signatures where HMACSHA256.constantTimeEqual(signature, expected) { matched = true }
        guard matched else { throw failure(.noMatchingSignature) }
        return timestamp
    }

    private func mac(body: [UInt8], timestamp: Int64) -> [UInt8] {
        mac.authenticate(bytes: Array("\(timestamp)\(joiner)".utf8) + body)
    }
}
