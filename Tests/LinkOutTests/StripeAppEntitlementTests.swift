import Foundation
import Lifecycle
import Payments
import TestSupport
import Testing

@testable import LinkOut

/// The app's checks follow a Stripe subscription through the same signed events that drive the webhooks: a
/// renewal moves the entitlement's end on, a cancellation ends it.
@Suite("Apps without a backend, on Stripe")
struct StripeAppEntitlementTests {
    @Test func aRenewalExtendsTheEntitlementAndACancellationEndsIt() throws {
        let harness = try PaymentHarness(provider: .stripe)
        let live = harness.live
        let checkout = try harness.openCheckout()
        #expect(try harness.choose(checkout, product: "pro.monthly", currency: "EUR").status == 303)
        let completed = StripeEvents.sessionCompleted(
            id: "evt_start",
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.monthly",
            mode: "subscription",
            total: 399,
            tax: 0,
            country: "DE",
            subscription: "sub_1"
        )
        #expect(try harness.deliver(completed).status == 200)
        try harness.waitForEvents()
        let result = try live.get(
            "\(checkout.path)/done?session_id=cs_test_fake1",
            headers: [
                "Cookie": checkout.cookie, "User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X)",
            ]
        )
        let code = String(try #require(result.text.firstMatch(of: /open\?code=([a-z2-7]{32})/)?.1))
        let redeemed = try AppEntitlementTests.json(
            try AppEntitlementTests.redeem(live, #"{"code": "\#(code)"}"#)
        )
        let credential = try #require(redeemed["credential"] as? String)
        let first = try AppEntitlementTests.verify(try #require(redeemed["entitlement"] as? String), live)
        #expect(first["kind"] as? String == "subscription")
        #expect(first["environment"] as? String == "sandbox")
        let periodEnd = try #require(first["expiresDate"] as? Int64)

        let renewal = StripeEvents.renewal(
            id: "evt_renewal",
            invoice: "in_2",
            subscription: "sub_1",
            total: 399,
            start: periodEnd / 1000,
            end: periodEnd / 1000 + 30 * 86_400
        )
        #expect(try harness.deliver(renewal).status == 200)
        try harness.waitForEvents()
        let renewed = try #require(
            try AppEntitlementTests.json(try AppEntitlementTests.entitlements(live, credential))["entitlements"]
                as? [[String: Any]]
        )
        #expect(renewed.first?["expiresDate"] as? Int64 == periodEnd + 30 * 86_400_000)
        let claims = try AppEntitlementTests.verify(try #require(renewed.first?["entitlement"] as? String), live)
        #expect(claims["expiresDate"] as? Int64 == periodEnd + 30 * 86_400_000)

        let cancelled = """
            {"id":"evt_del","object":"event","created":\(Clock.system.nowSeconds()),"livemode":false,\
            "type":"customer.subscription.deleted","data":{"object":{"id":"sub_1","object":"subscription",\
            "status":"canceled","ended_at":\(Clock.system.nowSeconds()),\
            "metadata":{"external_purchase_id":"\(checkout.externalPurchaseId)"}}}}
            """
        #expect(try harness.deliver(cancelled).status == 200)
        try harness.waitForEvents()
        let after = try AppEntitlementTests.json(try AppEntitlementTests.entitlements(live, credential))
        #expect((after["entitlements"] as? [Any])?.isEmpty == true)
        #expect((after["ended"] as? [[String: Any]])?.first?["reason"] as? String == "subscription_ended")
    }
}
