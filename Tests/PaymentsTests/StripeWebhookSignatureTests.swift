import Crypto
import Testing

@testable import Payments

/// `Stripe-Signature` verification (Stripe: "Check the webhook signatures").
@Suite("StripeWebhookSignature")
struct StripeWebhookSignatureTests {
    let secret = "whsec_test_secret"
    let body = Array(#"{"id":"evt_test_1","object":"event","type":"checkout.session.completed"}"#.utf8)
    let vector = "ca796b857b81e24d595a4c37abf88d2fafb533a32ede6ce4cfc9b0e892a35b08"

    @Test func acceptsTheSpecVector() throws {
        let verifier = TimestampedHMAC.stripe(secret: secret)
        let t = try verifier.verify(header: "t=1700000000,v1=\(vector)", body: body, nowSeconds: 1_700_000_010)
        #expect(t == 1_700_000_000)
        #expect(verifier.header(body: body, timestamp: 1_700_000_000) == "t=1700000000,v1=\(vector)")
    }

    @Test func anyV1MayMatchAndV0IsIgnored() throws {
        let verifier = TimestampedHMAC.stripe(secret: secret)
        let other = String(repeating: "ab", count: 32)
        let header = "t=1700000000,v1=\(other),v1=\(vector),v0=\(other)"
        try verifier.verify(header: header, body: body, nowSeconds: 1_700_000_100)
        try verifier.verify(header: "t=1700000000, v1=\(vector)", body: body, nowSeconds: 1_700_000_000)
    }

    @Test func refusesATooOldTimestampButNotAFutureOne() throws {
        let verifier = TimestampedHMAC.stripe(secret: secret)
        let header = "t=1700000000,v1=\(vector)"
        try verifier.verify(header: header, body: body, nowSeconds: 1_700_000_300)
        #expect(throws: verifier.failure(.timestampOutOfTolerance)) {
            try verifier.verify(header: header, body: body, nowSeconds: 1_700_000_301)
        }
        try verifier.verify(header: header, body: body, nowSeconds: 1_600_000_000)
        let strict = TimestampedHMAC.stripe(secret: secret, toleranceSeconds: 10)
        #expect(throws: strict.failure(.timestampOutOfTolerance)) {
            try strict.verify(header: header, body: body, nowSeconds: 1_700_000_011)
        }
    }

    /// Found by the `stripe-signature` fuzz target: the age of this timestamp overflowed before the signature was
    /// looked at, so one unauthenticated request stopped the server.
    @Test func aTimestampAtInt64sLimitIsTooOldNotAnOverflow() {
        let verifier = TimestampedHMAC.stripe(secret: secret)
        #expect(throws: verifier.failure(.timestampOutOfTolerance)) {
            try verifier.verify(header: "t=-9223372036854775808,v1=\(vector)", body: body, nowSeconds: 1_700_000_000)
        }
        #expect(throws: verifier.failure(.noMatchingSignature)) {
            try verifier.verify(header: "t=9223372036854775807,v1=\(vector)", body: body, nowSeconds: 1_700_000_000)
        }
    }

    @Test func refusesATamperedBodyOrAnotherSecret() {
        let verifier = TimestampedHMAC.stripe(secret: secret)
        let header = "t=1700000000,v1=\(vector)"
        var tampered = body
        tampered[tampered.count - 3] = UInt8(ascii: "X")
        #expect(throws: verifier.failure(.noMatchingSignature)) {
            try verifier.verify(header: header, body: tampered, nowSeconds: 1_700_000_000)
        }
        #expect(throws: verifier.failure(.noMatchingSignature)) {
            try TimestampedHMAC.stripe(secret: "whsec_other").verify(
                header: header,
                body: body,
                nowSeconds: 1_700_000_000
            )
        }
        // The secret is used whole, prefix included.
        #expect(throws: verifier.failure(.noMatchingSignature)) {
            try TimestampedHMAC.stripe(secret: "test_secret").verify(
                header: header,
                body: body,
                nowSeconds: 1_700_000_000
            )
        }
        // The timestamp is part of what is signed.
        #expect(throws: verifier.failure(.noMatchingSignature)) {
            try verifier.verify(header: "t=1700000001,v1=\(vector)", body: body, nowSeconds: 1_700_000_000)
        }
    }

    @Test func namesEachMalformedHeader() {
        let verifier = TimestampedHMAC.stripe(secret: secret)
        let cases: [(String?, TimestampedHMAC.Failure.Reason)] = [
            (nil, .missingHeader),
            ("", .missingHeader),
            ("garbage", .malformedHeader),
            ("v1=\(vector)", .malformedHeader),
            ("t=abc,v1=\(vector)", .malformedHeader),
            ("t=1,t=2,v1=\(vector)", .malformedHeader),
            ("t=1700000000", .noSignature),
            ("t=1700000000,v0=\(vector)", .noSignature),
            ("t=1700000000,v1=XYZ", .noSignature),
            ("t=1700000000,v1=\(vector.uppercased())", .noSignature),
        ]
        for (header, reason) in cases {
            #expect(throws: verifier.failure(reason), "\(header ?? "nil")") {
                try verifier.verify(header: header, body: body, nowSeconds: 1_700_000_000)
            }
        }
    }

    /// The descriptions reach logs and the refusal's answer, so their wording is kept.
    @Test func failuresSayWhatIsWrongAndNeverCarryTheSecret() {
        let verifier = TimestampedHMAC.stripe(secret: secret)
        let expected: [TimestampedHMAC.Failure.Reason: String] = [
            .missingHeader: "missing Stripe-Signature header",
            .malformedHeader: "malformed Stripe-Signature header",
            .noSignature: "no v1 signature in Stripe-Signature",
            .timestampOutOfTolerance: "Stripe-Signature timestamp is older than the tolerance",
            .noMatchingSignature: "no v1 signature matches the body",
        ]
        for reason in TimestampedHMAC.Failure.Reason.allCases {
            #expect(verifier.failure(reason).description == expected[reason])
            #expect(!verifier.failure(reason).description.contains("whsec_"))
        }
    }
}
