import Lifecycle
import Testing

@testable import Payments

/// `Stripe-Signature` verification (Stripe: "Check the webhook signatures").
@Suite("StripeWebhookSignature")
struct StripeWebhookSignatureTests {
    let secret = "whsec_test_secret"
    let body = Array(#"{"id":"evt_test_1","object":"event","type":"checkout.session.completed"}"#.utf8)
    let vector = "ca796b857b81e24d595a4c37abf88d2fafb533a32ede6ce4cfc9b0e892a35b08"

    @Test func acceptsTheSpecVector() throws {
        let verifier = StripeWebhookSignature(secret: secret)
        let t = try verifier.verify(header: "t=1700000000,v1=\(vector)", body: body, nowSeconds: 1_700_000_010)
        #expect(t == 1_700_000_000)
        #expect(
            StripeWebhookSignature.sign(body: body, secret: secret, timestamp: 1_700_000_000)
                == "t=1700000000,v1=\(vector)"
        )
    }

    @Test func anyV1MayMatchAndV0IsIgnored() throws {
        let verifier = StripeWebhookSignature(secret: secret)
        let other = String(repeating: "ab", count: 32)
        let header = "t=1700000000,v1=\(other),v1=\(vector),v0=\(other)"
        try verifier.verify(header: header, body: body, clock: .fixed(1_700_000_100_000))
        try verifier.verify(header: "t=1700000000, v1=\(vector)", body: body, nowSeconds: 1_700_000_000)
    }

    @Test func refusesATooOldTimestampButNotAFutureOne() throws {
        let verifier = StripeWebhookSignature(secret: secret)
        let header = "t=1700000000,v1=\(vector)"
        try verifier.verify(header: header, body: body, nowSeconds: 1_700_000_300)
        #expect(throws: StripeWebhookSignature.Failure.timestampTooOld) {
            try verifier.verify(header: header, body: body, nowSeconds: 1_700_000_301)
        }
        try verifier.verify(header: header, body: body, nowSeconds: 1_600_000_000)
        let strict = StripeWebhookSignature(secret: secret, toleranceSeconds: 10)
        #expect(throws: StripeWebhookSignature.Failure.timestampTooOld) {
            try strict.verify(header: header, body: body, nowSeconds: 1_700_000_011)
        }
    }

    /// Found by the `stripe-signature` fuzz target: the age of this timestamp overflowed before the signature was
    /// looked at, so one unauthenticated request stopped the server.
    @Test func aTimestampAtInt64sLimitIsTooOldNotAnOverflow() {
        let verifier = StripeWebhookSignature(secret: secret)
        #expect(throws: StripeWebhookSignature.Failure.timestampTooOld) {
            try verifier.verify(header: "t=-9223372036854775808,v1=\(vector)", body: body, nowSeconds: 1_700_000_000)
        }
        #expect(throws: StripeWebhookSignature.Failure.noMatchingSignature) {
            try verifier.verify(header: "t=9223372036854775807,v1=\(vector)", body: body, nowSeconds: 1_700_000_000)
        }
    }

    @Test func refusesATamperedBodyOrAnotherSecret() {
        let header = "t=1700000000,v1=\(vector)"
        var tampered = body
        tampered[tampered.count - 3] = UInt8(ascii: "X")
        #expect(throws: StripeWebhookSignature.Failure.noMatchingSignature) {
            try StripeWebhookSignature(secret: secret).verify(header: header, body: tampered, nowSeconds: 1_700_000_000)
        }
        #expect(throws: StripeWebhookSignature.Failure.noMatchingSignature) {
            try StripeWebhookSignature(secret: "whsec_other").verify(
                header: header,
                body: body,
                nowSeconds: 1_700_000_000
            )
        }
        // The secret is used whole, prefix included.
        #expect(throws: StripeWebhookSignature.Failure.noMatchingSignature) {
            try StripeWebhookSignature(secret: "test_secret").verify(
                header: header,
                body: body,
                nowSeconds: 1_700_000_000
            )
        }
        // The timestamp is part of what is signed.
        #expect(throws: StripeWebhookSignature.Failure.noMatchingSignature) {
            try StripeWebhookSignature(secret: secret).verify(
                header: "t=1700000001,v1=\(vector)",
                body: body,
                nowSeconds: 1_700_000_000
            )
        }
    }

    @Test func namesEachMalformedHeader() {
        let verifier = StripeWebhookSignature(secret: secret)
        let cases: [(String?, StripeWebhookSignature.Failure)] = [
            (nil, .missingHeader),
            ("", .missingHeader),
            ("garbage", .malformedHeader),
            ("v1=\(vector)", .malformedHeader),
            ("t=abc,v1=\(vector)", .malformedHeader),
            ("t=1,t=2,v1=\(vector)", .malformedHeader),
            ("t=1700000000", .noV1Signature),
            ("t=1700000000,v0=\(vector)", .noV1Signature),
            ("t=1700000000,v1=XYZ", .noV1Signature),
            ("t=1700000000,v1=\(vector.uppercased())", .noV1Signature),
        ]
        for (header, failure) in cases {
            #expect(throws: failure, "\(header ?? "nil")") {
                try verifier.verify(header: header, body: body, nowSeconds: 1_700_000_000)
            }
        }
    }

    @Test func failuresNeverCarryTheSecret() {
        for failure in [
            StripeWebhookSignature.Failure.missingHeader, .malformedHeader, .noV1Signature, .timestampTooOld,
            .noMatchingSignature,
        ] {
            #expect(!failure.description.contains("whsec_"))
        }
    }
}
