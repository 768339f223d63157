import Payments
import TestSupport
import Testing

@testable import LinkOut

/// Where a provider may send the person: its answer goes into a `Location` header.
@Suite("Payment page rule")
struct PaymentPageRuleTests {
    @Test func anHttpsPageOrOneOfLinkoutsOwnPathsAndNothingElse() {
        for url in ["https://checkout.stripe.com/c/pay/cs_test_1#fid", "/pay/demo/abc?x=1"] {
            #expect(PaymentPageRule.allows(url), "\(url)")
        }
        for url in [
            "javascript:alert(1)", "http://checkout.example/x", "https://", "//evil.example/x", "/\\evil.example",
            "https://pay.example/x\r\nSet-Cookie: evil=1", "https://pay.example/x y", "https://pay.example/\u{0}",
            "https://pay.example/é", "https://pay.example/" + String(repeating: "a", count: PaymentPageRule.longest),
        ] {
            #expect(!PaymentPageRule.allows(url), "\(url.prefix(60))")
        }
    }

    /// A provider (or whatever answers at its address) that names a page linkout does not send anyone to, or a
    /// session another payment has, gets the person the retry page: never a split header, never a 5xx.
    @Test func aProvidersBadAnswerGivesTheRetryPage() throws {
        let harness = try PaymentHarness(provider: .stripe)
        #expect(try harness.choose(try harness.openCheckout(), product: "pro.lifetime", currency: "EUR").status == 303)
        let answers = [
            #"{"id":"cs_split","url":"https://checkout.stripe.com/x\r\nSet-Cookie: evil=1"}"#,
            #"{"id":"cs_elsewhere","url":"//evil.example/x"}"#,
            #"{"id":"cs_long","url":"https://checkout.stripe.com/\#(String(repeating: "a", count: 9000))"}"#,
            #"{"id":"cs_test_fake1","url":"https://checkout.stripe.com/c/pay/cs_test_fake1"}"#,
            // Larger than any object linkout asks a provider for: not read whole (8 MiB each, at once, added up).
            #"{"id":"cs_big","url":"https://checkout.stripe.com/c/pay/cs_big","pad":"\#(String(repeating: "a", count: 1 << 20))"}"#,
        ]
        for answer in answers {
            // A read that failed is tried again: every try of the oversized one gets it.
            for _ in 0..<(answer.utf8.count > 1 << 20 ? StripeRetryPolicy().maxRetries + 1 : 1) {
                harness.stripe.enqueue(.respond(status: 200, body: answer))
            }
            let page = try harness.choose(try harness.openCheckout(), product: "pro.lifetime", currency: "EUR")
            #expect(page.status == 200, "\(answer.prefix(50))")
            #expect(page.header("Location") == nil)
            #expect(page.header("Set-Cookie")?.contains("evil") != true)
            #expect(page.text.contains("Payment is not available right now"))
        }
    }
}
