import Domain
import Testing

@testable import ExternalPurchase

/// What a 200 to a sent report says: Apple's answer is a JSON object naming the report; anything else (a proxy's
/// page, `{}`, another report's answer) says nothing of this one, which then goes again as after a lost answer.
@Suite("Send outcome")
struct SendOutcomeTests {
    static let sent = RequestIdentifier("5a2c8f2e-8f2b-4a51-9c3e-0b8d3c1f2a77")

    static func outcome(_ body: String) -> ExternalPurchaseAPIClient.Outcome {
        ExternalPurchaseAPIClient.outcome(status: 200, body: Array(body.utf8), retryAfter: nil, now: 0, sent: sent)
    }

    @Test func aTwoHundredIsAcceptedOnlyAsAppleWouldAnswerIt() {
        #expect(Self.outcome(#"{"requestIdentifier":"5a2c8f2e-8f2b-4a51-9c3e-0b8d3c1f2a77"}"#) == .accepted)
        #expect(Self.outcome(#"{"requestIdentifier":"5A2C8F2E-8F2B-4A51-9C3E-0B8D3C1F2A77"}"#) == .accepted)
        #expect(Self.outcome("{}") == .serverError(status: 200, body: "{}"))
        #expect(
            Self.outcome(#"{"requestIdentifier":5}"#) == .serverError(status: 200, body: #"{"requestIdentifier":5}"#)
        )
        #expect(Self.outcome("<html>oops</html>") == .serverError(status: 200, body: "<html>oops</html>"))
        #expect(Self.outcome("") == .serverError(status: 200, body: ""))
        #expect(Self.outcome("[]") == .serverError(status: 200, body: "[]"))
        let other = #"{"requestIdentifier":"00000000-0000-4000-8000-000000000000"}"#
        #expect(Self.outcome(other) == .serverError(status: 200, body: other))
    }
}
