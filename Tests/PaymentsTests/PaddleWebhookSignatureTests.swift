import Crypto
import Testing

@testable import Payments

/// `Paddle-Signature` verification (Paddle: "Verify webhook signatures"; the test vector of paddle-python-sdk's
/// `examples/webhook_verification.py`).
@Suite("PaddleWebhookSignature")
struct PaddleWebhookSignatureTests {
    /// Paddle's published example: the notification secret, the body of the Python SDK's
    /// `examples/_fixtures/webhook_payload.json` without its trailing newline (458 bytes), and the header it signs.
    let secret = "pdl_ntfset_01hs0t3tw21j988db1pam5xg8m_GrOWLNef+vmtjJYq4mSnHNzvc8uWoJ1I"
    let body = Array(
        #"{"data":{"id":"ctm_01hs0tqf76sxmp7ba5e4mw1sc8","name":"John Doe","email":"blackhole+verification2@paddle.com","locale":"en","status":"active","created_at":"2024-03-15T10:32:37.862Z","updated_at":"2024-03-15T10:32:37.862Z","custom_data":null,"import_meta":null,"marketing_consent":false},"event_id":"evt_01hs0tqfme2xwb2hvwv87p8y3w","event_type":"customer.created","occurred_at":"2024-03-15T10:32:38.286848Z","notification_id":"ntf_01hs0tqfrhgkyp39x4wyvy7h6n"}"#
            .utf8
    )
    let h1 = "558bf93944dbeb4790c7a8af6cb2ea435c8ca9c8396aafc1a4e37424ac132744"
    let ts: Int64 = 1_710_498_758
    /// What each test's verifier throws: the failures are worded for the scheme, not for the secret.
    var paddle: TimestampedHMAC { .paddle(secret: secret) }

    @Test func paddlesPublishedExampleVerifies() throws {
        #expect(body.count == 458)
        let verifier = TimestampedHMAC.paddle(secret: secret)
        let signed = try verifier.verify(header: "ts=\(ts);h1=\(h1)", body: body, nowSeconds: ts + 1)
        #expect(signed == ts)
        #expect(verifier.header(body: body, timestamp: ts) == "ts=\(ts);h1=\(h1)")
    }

    @Test func anyOfSeveralH1MayMatchAndUnknownKeysAreIgnored() throws {
        let verifier = TimestampedHMAC.paddle(secret: secret)
        let other = String(repeating: "ab", count: 32)
        try verifier.verify(header: "ts=\(ts);h1=\(other);h1=\(h1)", body: body, nowSeconds: ts)
        try verifier.verify(header: "ts=\(ts); h1=\(h1);h2=\(other)", body: body, nowSeconds: ts)
        #expect(throws: paddle.failure(.noMatchingSignature)) {
            try verifier.verify(header: "ts=\(ts);h1=\(other);h1=\(other)", body: body, nowSeconds: ts)
        }
    }

    @Test func anOldOrFarFutureTimestampIsRefused() throws {
        let verifier = TimestampedHMAC.paddle(secret: secret)
        let header = "ts=\(ts);h1=\(h1)"
        try verifier.verify(header: header, body: body, nowSeconds: ts + 60)
        try verifier.verify(header: header, body: body, nowSeconds: ts - 60)
        #expect(throws: paddle.failure(.timestampOutOfTolerance)) {
            try verifier.verify(header: header, body: body, nowSeconds: ts + 61)
        }
        #expect(throws: paddle.failure(.timestampOutOfTolerance)) {
            try verifier.verify(header: header, body: body, nowSeconds: ts - 61)
        }
        // Paddle's own 5 s, when configured.
        #expect(throws: paddle.failure(.timestampOutOfTolerance)) {
            try TimestampedHMAC.paddle(secret: secret, toleranceSeconds: 5).verify(
                header: header,
                body: body,
                nowSeconds: ts + 6
            )
        }
        #expect(throws: paddle.failure(.timestampOutOfTolerance)) {
            try verifier.verify(header: "ts=-9223372036854775808;h1=\(h1)", body: body, nowSeconds: ts)
        }
    }

    @Test func missingOrMalformedHeadersAreRefused() {
        let verifier = TimestampedHMAC.paddle(secret: secret)
        #expect(throws: paddle.failure(.missingHeader)) {
            try verifier.verify(header: nil, body: body, nowSeconds: ts)
        }
        #expect(throws: paddle.failure(.missingHeader)) {
            try verifier.verify(header: "", body: body, nowSeconds: ts)
        }
        #expect(throws: paddle.failure(.malformedHeader)) {
            try verifier.verify(header: "h1=\(h1)", body: body, nowSeconds: ts)
        }
        #expect(throws: paddle.failure(.malformedHeader)) {
            try verifier.verify(header: "ts=abc;h1=\(h1)", body: body, nowSeconds: ts)
        }
        #expect(throws: paddle.failure(.noSignature)) {
            try verifier.verify(header: "ts=\(ts)", body: body, nowSeconds: ts)
        }
        // Stripe's format is not Paddle's.
        #expect(throws: paddle.failure(.malformedHeader)) {
            try verifier.verify(header: "t=\(ts),v1=\(h1)", body: body, nowSeconds: ts)
        }
    }

    @Test func aTamperedBodyAnotherSecretOrAnotherTimestampFail() {
        var tampered = body
        tampered[10] = UInt8(ascii: "X")
        #expect(throws: paddle.failure(.noMatchingSignature)) {
            try TimestampedHMAC.paddle(secret: secret).verify(
                header: "ts=\(ts);h1=\(h1)",
                body: tampered,
                nowSeconds: ts
            )
        }
        #expect(throws: paddle.failure(.noMatchingSignature)) {
            try TimestampedHMAC.paddle(secret: "pdl_ntfset_other").verify(
                header: "ts=\(ts);h1=\(h1)",
                body: body,
                nowSeconds: ts
            )
        }
        #expect(throws: paddle.failure(.noMatchingSignature)) {
            try TimestampedHMAC.paddle(secret: secret).verify(
                header: "ts=\(ts + 1);h1=\(h1)",
                body: body,
                nowSeconds: ts
            )
        }
        // Upper-case hex is not how Paddle sends it, and is refused rather than guessed at.
        #expect(throws: paddle.failure(.noSignature)) {
            try TimestampedHMAC.paddle(secret: secret).verify(
                header: "ts=\(ts);h1=\(h1.uppercased())",
                body: body,
                nowSeconds: ts
            )
        }
    }

    /// The descriptions reach logs and the refusal's answer, so their wording is kept.
    @Test func failuresSayWhatIsWrongAndNeverCarryTheSecret() {
        let expected: [TimestampedHMAC.Failure.Reason: String] = [
            .missingHeader: "missing Paddle-Signature header",
            .malformedHeader: "malformed Paddle-Signature header",
            .noSignature: "no h1 signature in Paddle-Signature",
            .timestampOutOfTolerance: "Paddle-Signature timestamp is outside the tolerance",
            .noMatchingSignature: "no h1 signature matches the body",
        ]
        for reason in TimestampedHMAC.Failure.Reason.allCases {
            #expect(paddle.failure(reason).description == expected[reason])
            #expect(!paddle.failure(reason).description.contains("pdl_ntfset_"))
        }
    }
}
