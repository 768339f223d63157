import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import TestSupport
import Testing

@testable import LinkOut
@testable import Storage

/// A person's data out of the ledger: `linkout erase` by e-mail or account token, and the retention pass of
/// `retention.personalDataDays`. What Apple was sent, and the ids, amounts, dates and country behind it, stay.
@Suite("Privacy")
struct PrivacyTests {
    static let email = "Ada.Lovelace@example.com"

    /// A Stripe checkout paid by Ada: her e-mail, name, phone and address in the event, as Stripe sends them.
    static func adasCheckout(_ harness: PaymentHarness) throws -> PaymentHarness.Checkout {
        let checkout = try harness.openCheckout()
        #expect(try harness.choose(checkout, product: "pro.lifetime", currency: "EUR").status == 303)
        let event = StripeEvents.sessionCompleted(
            id: "evt_ada",
            session: "cs_test_fake1",
            checkout: checkout,
            product: "pro.lifetime",
            total: 2999,
            tax: 479,
            country: "DE",
            paymentIntent: "pi_ada"
        ).replacingOccurrences(
            of: #""customer_details":{"address":{"country":"DE"}}"#,
            with: #""customer":"cus_ADA0001","customer_details":{"email":"\#(email)","name":"Ada Lovelace","#
                + #""phone":"+44 20 7946 0000","address":{"country":"DE","line1":"Analytical Street 1","#
                + #""city":"Berlin","postal_code":"10115"}}"#
        )
        #expect(try harness.deliver(event).status == 200)
        // A later event of hers that names only her customer id.
        let customer = """
            {"id":"evt_ada_customer","object":"event","type":"customer.updated","created":\(Clock.system.nowSeconds()),\
            "livemode":false,"data":{"object":{"id":"cus_ADA0001","object":"customer","name":"Ada Lovelace",\
            "address":{"country":"DE","line1":"Analytical Street 1"}}}}
            """
        #expect(try harness.deliver(customer).status == 200)
        // Someone else whose address ends in hers: never touched by her erasure.
        let other = """
            {"id":"evt_jim","object":"event","type":"customer.created","created":\(Clock.system.nowSeconds()),\
            "livemode":false,"data":{"object":{"id":"cus_JIM0001","object":"customer","email":"jim\(email)",\
            "name":"Jim Lovelace"}}}
            """
        #expect(try harness.deliver(other).status == 200)
        try harness.waitForEvents()
        return checkout
    }

    /// Her data found in `text`. The phone and the postal code are looked for as written (with the space, in
    /// quotes): their bare digits turn up by chance in the ids and millisecond times a page shows.
    static func personal(_ text: String) -> [String] {
        [email.lowercased(), "Lovelace", "Analytical Street", "7946 0000", #""10115""#].filter {
            text.lowercased().contains($0.lowercased())
        }
    }

    @Test func theRedactionKeepsIdsAmountsAndCountry() throws {
        let body =
            #"{"id":"evt_1","data":{"object":{"amount_total":2999,"customer":"cus_X1234567","customer_details":{"email":"a@b.c","name":"A B","phone":"1","address":{"country":"DE","line1":"x","city":"y"}},"metadata":{"product_id":"pro"}}}}"#
        let redacted = try #require(PersonalData.redact(body))
        #expect(!redacted.contains("a@b.c") && !redacted.contains("A B") && !redacted.contains("line1"))
        #expect(redacted.contains(#""country":"DE""#) && redacted.contains("2999") && redacted.contains("cus_X1234567"))
        #expect(redacted.contains(#""product_id":"pro""#) && redacted.contains("evt_1"))
        #expect(PersonalData.linkedIds(in: body) == ["cus_X1234567"])
        #expect(PersonalData.redact("not json") == nil)
    }

    /// What an erasure left in Stripe's bodies under names the redaction did not know: a PayPal payer's address
    /// and name, what the person typed in a custom field, and the address or account in metadata the developer
    /// chose. The erasure said it was done, and a second run found nothing more.
    @Test func theRedactionTakesEveryProvidersNameForContactsAndWhatNamesThePerson() throws {
        let body =
            #"{"id":"evt_2","data":{"object":{"amount":2999,"payment_method_details":{"paypal":{"payer_email":"Zq@Example.com","verified_email":"zq@example.com","payer_name":"Zq Person","verified_name":"Zq Person","payer_id":"PAYER1"}},"custom_fields":[{"key":"nick","text":{"value":"Zqnick"}}],"metadata":{"app_user":"ZQ@example.com","account":"7e3fb20b-4cdb-47cc-936d-99d65f608138","product_id":"pro"}}}}"#
        let redacted = try #require(
            PersonalData.redact(body, mentioning: ["zq@example.com", "7E3FB20B-4CDB-47CC-936D-99D65F608138"])
        )
        for value in ["Zq@Example.com", "zq@example.com", "ZQ@example.com", "Zq Person", "Zqnick", "7e3fb20b"] {
            #expect(!redacted.contains(value), "\(value)")
        }
        #expect(redacted.contains(#""product_id":"pro""#) && redacted.contains("2999") && redacted.contains("evt_2"))
        #expect(redacted.contains("PAYER1"), "an id is no contact detail")
    }

    @Test func erasingByEmailRemovesHerDataAndChangesNothingAppleWasSent() throws {
        let harness = try PaymentHarness(provider: .stripe) { $0.adminToken = "admin-secret" }
        let checkout = try Self.adasCheckout(harness)
        harness.live.application.reporting.tick()
        let ledger = harness.live.ledger()
        let reportsBefore = try ledger.reports.reports(for: ExternalPurchaseID(checkout.externalPurchaseId)).map {
            $0.body
        }
        let itemsBefore = try ledger.reports.lineItems(for: ExternalPurchaseID(checkout.externalPurchaseId)).map(\.body)
        let purchasesBefore = PurchasesCSV.render(try ledger.payments.purchases(limit: 100))
        #expect(!itemsBefore.isEmpty)
        #expect(try !ledger.privacy.bodies(mentioning: Self.email).isEmpty, "her data is there to begin with")

        // A link that carried her address as a campaign value (the README's "a link might"), and one that did not.
        let again = TokenMinter.encode(
            try #require(try ledger.tokens.token(ExternalPurchaseID(checkout.externalPurchaseId))).token
        )
        // Also with spaces around it, and encoded twice (a link that leaves `%40` once decoded).
        let twice = Self.email.replacingOccurrences(of: "@", with: "%2540")
        for campaign in [
            "utm_source=\(Self.email.uppercased())&utm_term=spring", "utm_source=newsletter",
            "utm_content=%20\(Self.email)%20", "utm_medium=\(twice)",
        ] {
            let landing = try harness.live.get("/?externalPurchaseToken=\(again)&bundleId=com.example&\(campaign)")
            #expect(landing.status == 303)
        }

        let summary = try Erasure(ledger: harness.live.ledger()).erase(email: Self.email)
        #expect(summary.bodies == 2, "the checkout and the event that names only her customer id")
        #expect(summary.visits == 3, "the landings whose links carried her address")
        #expect(try ledger.privacy.bodies(mentioning: "jim" + Self.email).count == 1, "Jim's event is his own")
        // Gone from the tables: every stored body, searched for each piece.
        let stored = try ledger.privacy.bodies(mentioning: "cus_ADA0001").map(\.body).joined()
        #expect(Self.personal(stored).isEmpty, "\(Self.personal(stored))")
        #expect(stored.contains(#""country":"DE""#))
        // Gone from the exports and pages (and never in them): the purchases, the token's admin page, the audit.
        let admin = ["Authorization": "Bearer admin-secret"]
        for page in [
            "/admin/purchases", "/admin/tokens/\(checkout.externalPurchaseId)", "/admin/audit", "/admin/purchases.csv",
        ] {
            let text = try harness.live.get(page, headers: admin).text
            #expect(Self.personal(text).isEmpty, "\(page): \(Self.personal(text))")
        }
        let campaigns = try harness.live.get("/admin/tokens/\(checkout.externalPurchaseId)", headers: admin).text
        #expect(campaigns.contains("spring") && campaigns.contains("newsletter"), "the other values stay")
        #expect(PurchasesCSV.render(try ledger.payments.purchases(limit: 100)) == purchasesBefore)
        // Apple's side unchanged: the same reports and line items, and nothing more sent.
        let sent = harness.apple.apple.received.count
        harness.live.application.reporting.tick()
        #expect(
            try ledger.reports.reports(for: ExternalPurchaseID(checkout.externalPurchaseId)).map { $0.body }
                == reportsBefore
        )
        #expect(
            try ledger.reports.lineItems(for: ExternalPurchaseID(checkout.externalPurchaseId)).map(\.body)
                == itemsBefore
        )
        #expect(harness.apple.apple.received.count == sent)
        // Recorded, under a fingerprint of the address, never the address.
        let entry = try #require(try ledger.audit.entries().first { $0.action == "privacy.erase" })
        #expect(entry.subject == "email:" + (try AuditFingerprint(ledger: ledger))(Self.email.lowercased()))
        #expect(entry.actor.hasPrefix("cli:"))
        // Not in the files either: the rewritten rows' old bytes are zeroed, and the WAL is folded in and emptied.
        #expect(ledger.privacy.foldWAL())
        let folder = harness.live.application.configuration.storage.dataDir
        for name in ["linkout.sqlite", "linkout.sqlite-wal"] {
            let bytes = FileManager.default.contents(atPath: folder + "/" + name) ?? Data()
            // As a JSON string, whole: Jim's address ends with hers and is his own.
            #expect(bytes.range(of: Data("\"\(Self.email)\"".utf8)) == nil, "\(name) still holds the address")
        }
    }

    /// An erasure by address run again finds what came since by the ids the first one followed: a dispute names
    /// only her payment, and the address was in no body any more, so a second run found nothing and her name and
    /// address stayed in the dispute.
    @Test func erasingByEmailAgainFindsLaterEventsByTheIdsFollowedBefore() throws {
        let harness = try PaymentHarness(provider: .stripe)
        _ = try Self.adasCheckout(harness)
        // Her charge names her customer id, not her address.
        let charge = """
            {"id":"evt_ada_charge","object":"event","type":"charge.succeeded","created":\(Clock.system.nowSeconds()),\
            "livemode":false,"data":{"object":{"id":"ch_ADA000001","object":"charge","customer":"cus_ADA0001",\
            "billing_details":{"name":"Ada Lovelace"}}}}
            """
        #expect(try harness.deliver(charge).status == 200)
        try harness.waitForEvents()
        let ledger = harness.live.ledger()
        #expect(try Erasure(ledger: ledger).erase(email: Self.email).bodies == 3)
        // Then a dispute of that charge, which names only the charge.
        let dispute = """
            {"id":"evt_ada_dispute","object":"event","type":"charge.dispute.created",\
            "created":\(Clock.system.nowSeconds()),"livemode":false,"data":{"object":{"id":"dp_ADA0001",\
            "object":"dispute","charge":"ch_ADA000001","evidence":{"customer_name":"Ada Lovelace",\
            "billing_address":"Analytical Street 1, 10115 Berlin"}}}}
            """
        #expect(try harness.deliver(dispute).status == 200)
        try harness.waitForEvents()
        #expect(Self.personal(try ledger.privacy.bodies(mentioning: "dp_ADA0001").map(\.body).joined()) != [])
        let again = try Erasure(ledger: ledger).erase(email: Self.email)
        #expect(again.bodies == 1, "the dispute, found by her charge's id")
        let stored = try ledger.privacy.bodies(mentioning: "ch_ADA000001").map(\.body).joined()
        #expect(stored.contains("dp_ADA0001"))
        #expect(Self.personal(stored).isEmpty, "\(Self.personal(stored))")
        #expect(try Erasure(ledger: ledger).erase(email: Self.email).bodies == 0, "nothing left to rewrite")
    }

    /// Apple's example token, forwarded by the app bound to `account`.
    static func bind(_ live: LiveApplication, to account: String) throws -> RawClient.Response {
        try live.post(
            "/v1/tokens",
            contentType: "application/json",
            body: #"{"token": "\#(AppleVectors.v1)", "appAccountToken": "\#(account)"}"#
        )
    }

    @Test func erasingByAccountTokenUnbindsCredentialsAndEntitlementEvents() throws {
        let receiver = try WebhookReceiver(secret: "hook-secret-0123456789")
        defer { receiver.stop() }
        let live = try LiveApplication {
            $0.webhooks.url = receiver.url
            $0.webhooks.secret = receiver.secret
            $0.adminToken = "admin-secret"
        }
        let account = "6f1c1a52-5d3c-4c84-9a57-8f0c42e6d1a0"
        #expect(try Self.bind(live, to: account).status == 201)
        let (code, purchaseId) = try AppEntitlementTests.purchase(live)
        let redeemed = try AppEntitlementTests.json(try AppEntitlementTests.redeem(live, #"{"code": "\#(code)"}"#))
        let credentialId = try #require(redeemed["credentialId"] as? String)
        #expect(eventually(within: 30) { !receiver.deliveries.isEmpty })
        let ledger = live.ledger()
        #expect(
            try ledger.privacy.bodies(mentioning: account).contains {
                if case .webhook = $0.kind { true } else { false }
            }
        )

        let credential = try #require(redeemed["credential"] as? String)
        func entitlementClaims() throws -> [String: Any] {
            let answer = try AppEntitlementTests.json(try AppEntitlementTests.entitlements(live, credential))
            let list = try #require(answer["entitlements"] as? [[String: Any]])
            return try AppEntitlementTests.verify(try #require(list.first?["entitlement"] as? String), live)
        }
        #expect(try entitlementClaims()["appAccountToken"] as? String == account)

        let summary = try Erasure(ledger: ledger).erase(accountToken: account.uppercased())
        #expect(!summary.unknownAccount)
        // An account no token or credential names (a mistyped one) is said to be so.
        #expect(try Erasure(ledger: ledger).erase(accountToken: "99999999-9999-4999-8999-999999999999").unknownAccount)
        #expect(summary.credentials == 1)
        #expect(summary.bodies >= 1)
        #expect(try ledger.privacy.bodies(mentioning: account).isEmpty)
        #expect(try ledger.credentials.credential(id: credentialId)?.appAccountToken == PrivacyStore.erased)
        // The entitlements the app is handed from now on do not name the erased account.
        let claims = try entitlementClaims()
        #expect(claims["appAccountToken"] == nil && claims["sub"] != nil, "\(claims)")
        // An event made after the erasure (the purchase refunded) names the account as erased, not by its token.
        let delivered = receiver.deliveries.count
        let refund = try live.post(
            "/admin/demo/purchases/\(purchaseId)/refund",
            contentType: "text/plain",
            body: "",
            headers: ["Authorization": "Bearer admin-secret"]
        )
        #expect(refund.status == 200, "\(refund.status) \(refund.text)")
        #expect(eventually(within: 30) { receiver.deliveries.count > delivered })
        let refunded = try #require(receiver.deliveries.last)
        let refundedBody = String(decoding: refunded.body, as: UTF8.self)
        #expect(refundedBody.contains("purchase.refunded") && refundedBody.contains(PrivacyStore.erased))
        #expect(!refundedBody.contains(account), "\(refundedBody)")
        #expect(try ledger.privacy.bodies(mentioning: account).isEmpty)
        // Again: the bodies it rewrote still hold the purchase's ids and are found, but nothing is rewritten.
        #expect(try Erasure(ledger: ledger).erase(accountToken: account) == .init(bodies: 0, credentials: 0))
        // Kept: the token's account, which places a customer's renewals on Apple's tokens (README "Privacy").
        #expect(try ledger.tokens.token("00000000-0000-0000-0000-000000000000")?.appAccountToken == account)
        // The erased credential does not become another account's: a purchase of another account is refused.
        let (token, landing) = TokenMinter.exampleLanding(at: Clock.system.nowMilliseconds())
        let other = "0b7e6a52-1d3c-4c84-9a57-8f0c42e6d1a1"
        #expect(
            try live.post(
                "/v1/tokens",
                contentType: "application/json",
                body: #"{"token": "\#(TokenMinter.encode(token))", "appAccountToken": "\#(other)"}"#
            ).status == 201
        )
        let (otherCode, _) = try AppEntitlementTests.purchase(live, landing: landing)
        let join = try AppEntitlementTests.redeem(
            live,
            #"{"code": "\#(otherCode)"}"#,
            headers: ["Authorization": "Bearer \(credential)"]
        )
        #expect(join.status == 409 && join.text.contains("credential_erased"), "\(join.status) \(join.text)")
        // Nor does it take a purchase that names no account (before, nothing refused that one, and it joined the
        // erased person's credential); the code is redeemed without it, for a credential of its own.
        let (_, bare) = TokenMinter.exampleLanding(at: Clock.system.nowMilliseconds())
        let (bareCode, _) = try AppEntitlementTests.purchase(live, landing: bare)
        let joinBare = try AppEntitlementTests.redeem(
            live,
            #"{"code": "\#(bareCode)"}"#,
            headers: ["Authorization": "Bearer \(credential)"]
        )
        #expect(joinBare.status == 409 && joinBare.text.contains("credential_erased"), "\(joinBare.text)")
        #expect(try AppEntitlementTests.redeem(live, #"{"code": "\#(bareCode)"}"#).status == 200)
    }

    /// A code issued before its account was erased and redeemed after: the credential it makes is marked
    /// `[erased]` as the account's others are, the entitlement leaves the account out, and the answer's
    /// purchase says `[erased]`: the erasure is not undone by a code already handed out.
    @Test func aCodeIssuedBeforeAnErasureDoesNotBringTheAccountBack() throws {
        let live = try LiveApplication()
        let account = "7a2d2b63-6e4d-4d95-8b68-9f1d53f7e2b1"
        #expect(try Self.bind(live, to: account).status == 201)
        let (code, _) = try AppEntitlementTests.purchase(live)
        let ledger = live.ledger()
        _ = try Erasure(ledger: ledger).erase(accountToken: account)
        let answer = try AppEntitlementTests.redeem(live, #"{"code": "\#(code)"}"#)
        #expect(answer.status == 200, "\(answer.status) \(answer.text)")
        #expect(!answer.text.contains(account), "\(answer.text)")
        let redeemed = try AppEntitlementTests.json(answer)
        #expect((redeemed["purchase"] as? [String: Any])?["appAccountToken"] as? String == PrivacyStore.erased)
        let claims = try AppEntitlementTests.verify(try #require(redeemed["entitlement"] as? String), live)
        #expect(claims["appAccountToken"] == nil && claims["sub"] != nil, "\(claims)")
        let credentialId = try #require(redeemed["credentialId"] as? String)
        #expect(try ledger.credentials.credential(id: credentialId)?.appAccountToken == PrivacyStore.erased)
    }

    /// An address with a capital outside ASCII (`Élodie@…`) is found as written, in a campaign value and in a
    /// stored body: both sides are lowered by the ledger's own `lower` (it was lowered two ways and never matched).
    @Test func anAddressWithACapitalOutsideAsciiIsFoundAsWritten() throws {
        let live = try LiveApplication()
        let address = "Élodie@example.com"
        let (_, landing) = TokenMinter.exampleLanding(at: Clock.system.nowMilliseconds())
        #expect(try live.get(landing + "&utm_source=%C3%89lodie%40example.com&utm_term=spring").status == 303)
        let ledger = live.ledger()
        let event = StoredPaymentEvent(
            provider: "stripe",
            eventId: "evt_elodie",
            type: "customer.created",
            body: #"{"id":"evt_elodie","data":{"object":{"email":"\#(address)","name":"Élodie Martin"}}}"#,
            receivedAt: 1
        )
        #expect(try ledger.payments.storePaymentEvent(event))
        let summary = try Erasure(ledger: ledger).erase(email: address)
        #expect(summary.visits == 1 && summary.bodies == 1, "\(summary)")
        #expect(try ledger.privacy.bodies(mentioning: address).isEmpty)
    }

    /// Another customer's event that names her (a gift, a referral in metadata) loses only that mention: its own
    /// customer's address and name stay, and their other events, found by their customer id, are not touched.
    /// Before, her erasure followed the other customer's id and erased their data everywhere.
    @Test func erasingHerTouchesOnlyHerMentionInAnotherCustomersEvents() throws {
        let live = try LiveApplication()
        let ledger = live.ledger()
        let address = "zora@example.org"
        let events = [
            (
                "evt_zora",
                #"{"id":"evt_zora","data":{"object":{"customer":"cus_ZORA0001","customer_details":{"email":"Zora@example.org","name":"Zora Quill"}}}}"#
            ),
            (
                "evt_dana",
                #"{"id":"evt_dana","data":{"object":{"customer":"cus_DANA0001","customer_details":{"email":"dana@example.com","name":"Dana Doe"},"metadata":{"gift_from":"zora@example.org","gift_from_name":"Zora Quill"}}}}"#
            ),
            // A transaction of Bob's (Paddle's carry no address) that names her, beside his own buyer's name: only
            // the mention goes, and his customer id is not followed to his other events.
            (
                "evt_bob_txn",
                #"{"id":"evt_bob_txn","data":{"object":{"customer_id":"ctm_bob000001","custom_data":{"gift_to":"zora@example.org","buyer_name":"Bob Buyer"}}}}"#
            ),
            (
                "evt_bob",
                #"{"id":"evt_bob","data":{"object":{"id":"ctm_bob000001","email":"bob@example.net","name":"Bob Buyer"}}}"#
            ),
            (
                "evt_dana_2",
                #"{"id":"evt_dana_2","data":{"object":{"id":"cus_DANA0001","email":"dana@example.com","name":"Dana Doe"}}}"#
            ),
        ]
        for (id, body) in events {
            #expect(
                try ledger.payments.storePaymentEvent(
                    StoredPaymentEvent(
                        provider: "stripe",
                        eventId: id,
                        type: "customer.updated",
                        body: body,
                        receivedAt: 1
                    )
                )
            )
        }
        let summary = try Erasure(ledger: ledger).erase(email: address)
        #expect(summary.bodies == 3, "\(summary)")
        #expect(try ledger.privacy.bodies(mentioning: address).isEmpty)
        #expect(try ledger.privacy.bodies(mentioning: "Zora Quill").isEmpty)
        let dana = try ledger.privacy.bodies(mentioning: "dana@example.com").map(\.body)
        #expect(dana.count == 2)
        #expect(dana.allSatisfy { $0.contains("Dana Doe") })
        let bob = try ledger.privacy.bodies(mentioning: "ctm_bob000001").map(\.body)
        #expect(bob.count == 2 && bob.allSatisfy { $0.contains("Bob Buyer") }, "\(bob)")
        #expect(bob.contains { $0.contains("bob@example.net") })
    }

    /// The retention pass erases everyone's data without knowing whose: an address or the body's account token
    /// under keys the developer chose (metadata) goes too, not only the keys that name a person's data.
    @Test func theRetentionRedactionTakesAddressesAndTheAccountUnderAnyKey() throws {
        let account = "a1b2c3d4-1111-4222-8333-444455556666"
        let body =
            #"{"id":"evt_3","data":{"object":{"amount":2999,"metadata":{"referred_by":"Zora.Quill@example.org","app_user":"\#(account)","product_id":"pro","checkout":"0c1d2e3f"},"appAccountToken":"\#(account)"}}}"#
        let redacted = try #require(PersonalData.redact(body))
        #expect(!redacted.contains("Zora.Quill") && !redacted.contains(account), "\(redacted)")
        #expect(redacted.contains(#""product_id":"pro""#) && redacted.contains(#""checkout":"0c1d2e3f""#))
        #expect(redacted.contains("2999") && redacted.contains("evt_3"))
        // A URL with an `@` is no address.
        for url in [
            "https://cdn.example.com/npm/pkg@1.2.3/app.js", "https://medium.com/@brand/post.html", "https://u:t@h.com",
        ] {
            #expect(!PersonalData.holdsAnAddress(url), "\(url)")
        }
        #expect(PersonalData.holdsAnAddress("Gift from <Zora.Quill@example.org>, thanks"))
        #expect(!PersonalData.holdsAnAddress("@brand") && !PersonalData.holdsAnAddress("a@b.c1"))
    }

    /// More of a person's bodies than one search returns, and more of their ids than the linked-id limit: every
    /// body is rewritten (a round per search), the address asked for searched first. Before, the asked-for value
    /// was searched last and past the limit never, and a run again found nothing more.
    @Test func everyBodyIsRewrittenBeyondOneSearchAndTheLinkedIdLimit() throws {
        let live = try LiveApplication()
        let ledger = live.ledger()
        let address = "many@example.com"
        for index in 0..<7 {
            let event = StoredPaymentEvent(
                provider: "stripe",
                eventId: "evt_many_\(index)",
                type: "customer.updated",
                body:
                    #"{"id":"evt_many_\#(index)","data":{"object":{"id":"cus_MANY000\#(index)","email":"\#(address)"}}}"#,
                receivedAt: 1
            )
            #expect(try ledger.payments.storePaymentEvent(event))
        }
        let summary = try Erasure(ledger: ledger, searchLimit: 3, linkedIdLimit: 1).erase(email: address)
        #expect(summary.bodies == 7, "\(summary)")
        #expect(try ledger.privacy.bodies(mentioning: address).isEmpty)
    }

    @Test func theRetentionPassErasesWhatIsOlderThanTheSetting() throws {
        let time = ManualClock()
        let harness = try PaymentHarness(provider: .stripe, clock: time.clock) { $0.retention.personalDataDays = 30 }
        _ = try Self.adasCheckout(harness)
        let ledger = harness.live.ledger()
        let retention = try #require(harness.live.application.retention)
        #expect(retention.pass() == 0, "nothing is 30 days old yet")
        #expect(try ledger.privacy.bodies(mentioning: "cus_JIM0001").count == 1)
        #expect(try !ledger.privacy.bodies(mentioning: Self.email).isEmpty)
        // Thirty-one days on, the hourly pass (woken by the clock) erases both events, once.
        time.advance(seconds: 31 * 86_400)
        #expect(
            eventually(within: 30) {
                (try? ledger.audit.entries().filter { $0.action == "privacy.retention" }.count) == 1
            }
        )
        #expect(try ledger.privacy.bodies(mentioning: Self.email).isEmpty)
        let entry = try #require(try ledger.audit.entries().first { $0.action == "privacy.retention" })
        #expect(entry.after == "3 stored bodies older than 30 days rewritten")
        // Written before the first change: a pass killed halfway has still said what it was doing.
        let started = try #require(try ledger.audit.entries().first { $0.action == "privacy.retention_started" })
        #expect(
            started.id < entry.id
                && started.after == "stored bodies older than 30 days to be rewritten"
        )
        #expect(retention.pass() == 0, "done once")
    }
}
