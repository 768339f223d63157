import Crypto
import Testing

/// The one implementation behind the Stripe, Paddle and linkout webhook signatures. The three named values live
/// with their users and are pinned there against each provider's published vectors; here the same three spellings
/// are built by hand, so the type is tested on its own.
@Suite("TimestampedHMAC")
struct TimestampedHMACTests {
    static let stripeLike = TimestampedHMAC(
        secret: "whsec_test",
        format: .init(name: "Stripe-Signature", separator: ",", timestampKey: "t", signatureKey: "v1"),
        joiner: ".",
        tolerance: .past(seconds: 300)
    )
    static let paddleLike = TimestampedHMAC(
        secret: "pdl_ntfset_test",
        format: .init(name: "Paddle-Signature", separator: ";", timestampKey: "ts", signatureKey: "h1"),
        joiner: ":",
        tolerance: .eitherWay(seconds: 60)
    )
    static let linkoutLike = TimestampedHMAC(
        secret: "s3cret",
        format: .init(name: "Linkout-Signature", separator: ",", timestampKey: "t", signatureKey: "v1"),
        joiner: ".",
        tolerance: .past(seconds: 300)
    )
    static let schemes = [stripeLike, paddleLike, linkoutLike]

    let body = Array(#"{"id":"evt_1"}"#.utf8)
    let now: Int64 = 1_700_000_000

    /// The signature is the HMAC of the timestamp, the joiner and the body, keyed with the secret's UTF-8 bytes.
    static func expectedHex(secret: String, signed: String, body: [UInt8]) -> String {
        Hex.encode(HMACSHA256(key: Array(secret.utf8)).authenticate(bytes: Array(signed.utf8) + body))
    }

    @Test(arguments: schemes)
    func aSignedHeaderVerifies(scheme: TimestampedHMAC) throws {
        let header = scheme.header(body: body, timestamp: now)
        #expect(try scheme.verify(header: header, body: body, nowSeconds: now + 1) == now)
    }

    @Test func eachSchemeSpellsItsHeaderAndSignsItsPayload() {
        let stripe = Self.expectedHex(secret: "whsec_test", signed: "1700000000.", body: body)
        #expect(Self.stripeLike.header(body: body, timestamp: now) == "t=1700000000,v1=\(stripe)")
        let paddle = Self.expectedHex(secret: "pdl_ntfset_test", signed: "1700000000:", body: body)
        #expect(Self.paddleLike.header(body: body, timestamp: now) == "ts=1700000000;h1=\(paddle)")
        // `printf '1700000000.{"id":"evt_1"}' | openssl dgst -sha256 -hmac s3cret`
        #expect(
            Self.linkoutLike.header(body: body, timestamp: now)
                == "t=1700000000,v1=8e6f5c9e12ccd802130a0cf337c2d90395d59605481627c32bb6c530172adf23"
        )
    }

    @Test(arguments: schemes)
    func aTamperedBodyOrAnotherTimestampDoesNotMatch(scheme: TimestampedHMAC) {
        let header = scheme.header(body: body, timestamp: now)
        var tampered = body
        tampered[2] = UInt8(ascii: "X")
        #expect(throws: scheme.failure(.noMatchingSignature)) {
            try scheme.verify(header: header, body: tampered, nowSeconds: now)
        }
        let signature = header.split(separator: scheme.format.separator)[1]
        let moved = "\(scheme.format.timestampKey)=\(now + 1)\(scheme.format.separator)\(signature)"
        #expect(throws: scheme.failure(.noMatchingSignature)) {
            try scheme.verify(header: moved, body: body, nowSeconds: now)
        }
    }

    @Test func anyOfSeveralSignaturesMayMatchAndOtherKeysAreIgnored() throws {
        let scheme = Self.stripeLike
        let good = scheme.header(body: body, timestamp: now).split(separator: ",")[1]
        let other = String(repeating: "ab", count: 32)
        try scheme.verify(header: "t=\(now),v1=\(other), \(good),v0=\(other)", body: body, nowSeconds: now)
        #expect(throws: scheme.failure(.noMatchingSignature)) {
            try scheme.verify(header: "t=\(now),v1=\(other),v1=\(other)", body: body, nowSeconds: now)
        }
    }

    @Test func aPastToleranceRefusesOnlyStaleTimestamps() throws {
        let scheme = Self.stripeLike
        let header = scheme.header(body: body, timestamp: now)
        try scheme.verify(header: header, body: body, nowSeconds: now + 300)
        #expect(throws: scheme.failure(.timestampOutOfTolerance)) {
            try scheme.verify(header: header, body: body, nowSeconds: now + 301)
        }
        try scheme.verify(header: header, body: body, nowSeconds: now - 100_000)
    }

    @Test func anEitherWayToleranceRefusesStaleAndFarFutureTimestamps() throws {
        let scheme = Self.paddleLike
        let header = scheme.header(body: body, timestamp: now)
        try scheme.verify(header: header, body: body, nowSeconds: now + 60)
        try scheme.verify(header: header, body: body, nowSeconds: now - 60)
        for off in [now + 61, now - 61] {
            #expect(throws: scheme.failure(.timestampOutOfTolerance)) {
                try scheme.verify(header: header, body: body, nowSeconds: off)
            }
        }
    }

    /// A difference past Int64's range is out of tolerance, not a crash.
    @Test(arguments: schemes)
    func aTimestampAtInt64sLimitIsOutOfTolerance(scheme: TimestampedHMAC) {
        let signature = String(repeating: "ab", count: 32)
        let key = scheme.format.timestampKey
        let separator = scheme.format.separator
        let header = "\(key)=-9223372036854775808\(separator)\(scheme.format.signatureKey)=\(signature)"
        #expect(throws: scheme.failure(.timestampOutOfTolerance)) {
            try scheme.verify(header: header, body: body, nowSeconds: now)
        }
    }

    @Test func malformedHeadersAreNamed() {
        let scheme = Self.paddleLike
        let h1 = String(repeating: "ab", count: 32)
        let cases: [(String?, TimestampedHMAC.Failure.Reason)] = [
            (nil, .missingHeader),
            ("", .missingHeader),
            ("garbage", .malformedHeader),
            ("h1=\(h1)", .malformedHeader),
            ("ts=soon;h1=\(h1)", .malformedHeader),
            ("ts=1;ts=1;h1=\(h1)", .malformedHeader),
            ("t=\(now),v1=\(h1)", .malformedHeader),
            ("ts=\(now)", .noSignature),
            ("ts=\(now);h1=abc", .noSignature),
            ("ts=\(now);h1=\(h1.uppercased())", .noSignature),
        ]
        for (header, reason) in cases {
            #expect(throws: scheme.failure(reason), "\(header ?? "nil")") {
                try scheme.verify(header: header, body: body, nowSeconds: now)
            }
        }
    }

    @Test func failuresAreWordedForTheirHeader() {
        #expect(Self.linkoutLike.failure(.missingHeader).description == "missing Linkout-Signature header")
        #expect(Self.paddleLike.failure(.noSignature).description == "no h1 signature in Paddle-Signature")
        #expect(
            Self.stripeLike.failure(.timestampOutOfTolerance).description
                == "Stripe-Signature timestamp is older than the tolerance"
        )
        #expect(
            Self.paddleLike.failure(.timestampOutOfTolerance).description
                == "Paddle-Signature timestamp is outside the tolerance"
        )
        #expect(Self.stripeLike.failure(.missingHeader) != Self.paddleLike.failure(.missingHeader))
    }
}
