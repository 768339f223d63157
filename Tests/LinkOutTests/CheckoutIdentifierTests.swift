import Domain
import Foundation
import Storage
import TestSupport
import Testing

@testable import LinkOut

/// Checkout ids lead with a time, so the ledger's index of checkouts grows at its end; ids minted before keep
/// working.
@Suite("Checkout ids")
struct CheckoutIdentifierTests {
    let identifiers = Identifiers(secret: String(repeating: "ab", count: 32))

    func token(_ id: String, created: Int64) -> ExternalPurchaseToken {
        ExternalPurchaseToken(
            appAppleId: 1_234_567_890,
            bundleId: "com.example",
            tokenCreationDate: created,
            externalPurchaseId: ExternalPurchaseID(id)
        )
    }

    @Test func aTokensIdIsItsCreationTimeThenItsHMAC() {
        let created: Int64 = 1_706_169_600_000
        let first = identifiers.checkoutId(for: token("00000000-0000-0000-0000-000000000000", created: created))
        let again = identifiers.checkoutId(for: token("00000000-0000-0000-0000-000000000000", created: created))
        #expect(first == again)
        #expect(first.rawValue.utf8.count == 35)
        #expect(first.rawValue.hasPrefix(Identifiers.checkoutTime(created)))
        #expect(
            first.rawValue.hasSuffix(
                identifiers.checkoutHMAC(externalPurchaseId: "00000000-0000-0000-0000-000000000000")
            )
        )
        let other = identifiers.checkoutId(for: token("00000000-0000-0000-0000-000000000001", created: created))
        #expect(other.rawValue.prefix(9) == first.rawValue.prefix(9))
        #expect(other.rawValue.dropFirst(9) != first.rawValue.dropFirst(9))
        // Another secret gives another id for the same token.
        let elsewhere = Identifiers(secret: String(repeating: "cd", count: 32))
        #expect(elsewhere.checkoutId(for: token("00000000-0000-0000-0000-000000000000", created: created)) != first)
    }

    /// Ids already handed out (checkout links, session cookies) stay valid only while the MAC over them is
    /// computed the same way: values worked out apart from linkout (Python's `hmac` and `base64.b32encode`).
    @Test func theMACsOfIdsAreTheOnesAlreadyHandedOut() {
        #expect(
            identifiers.checkoutHMAC(externalPurchaseId: "00000000-0000-0000-0000-000000000000")
                == "anugxue5hp55rkxg5pzcosfy3p"
        )
        #expect(identifiers.isIssuedSession("abcdefghijklmnopqrstuvwxyz" + "nu3jxc4ar2oqiik7wd4idk2tm2"))
        #expect(!identifiers.isIssuedSession("abcdefghijklmnopqrstuvwxyz" + "nu3jxc4ar2oqiik7wd4idk2tm3"))
        // The provider's Idempotency-Key, CSRF tokens, redemption codes, credential hashes and event ids alike.
        #expect(
            identifiers.intentId(
                checkoutId: "co1",
                productId: "pro.lifetime",
                amount: "29.99",
                currency: "EUR",
                attempt: 1
            ) == "kuvzi4rxzknibraqbbuvcgdq4r"
        )
        #expect(identifiers.csrfToken(session: "sess", scope: "scope") == "lcar665onvm74goym7uw53cgfnbyyaui")
        #expect(identifiers.redemptionCode(purchaseId: "pur_1") == "jnxy2m7vvnws2gcp3ncdlwhdpkvz25le")
        #expect(
            identifiers.credentialHash("lcr_x") == "9c75750d397cddd955aebb4dccf7190f58a3b850b418f9f68791d2747938370c"
        )
        #expect(identifiers.eventId(["a", "b"]) == "evt_e0e838400909831077d0d155692ece04")
        let session = identifiers.session()
        #expect(session.utf8.count == 52 && identifiers.isIssuedSession(session))
        #expect(identifiers.fresh() != identifiers.fresh())
        // RFC 4648's vectors (lowercase, unpadded), and a length cut to whole characters.
        #expect(Identifiers.base32(Array("foobar".utf8)) == "mzxw6ytboi")
        #expect(Identifiers.base32(Array("f".utf8)) == "my")
        #expect(Identifiers.base32(Array("foobar".utf8), characters: 4) == "mzxw")
        #expect(Identifiers.base32([]) == "")
    }

    @Test func idsSortByTime() {
        var generator = SystemRandomNumberGenerator()
        let edges: [Int64] = [0, 1, 31, 32, 1_706_169_600_000, 1_706_169_600_001, (1 << 45) - 1]
        let times: [Int64] = (0..<2000).map { _ in Int64.random(in: 0..<(1 << 45), using: &generator) } + edges
        let ids = times.map { identifiers.checkoutId(for: token(UUID().uuidString, created: $0)).rawValue }
        let byTime = zip(times, ids).sorted { $0.0 < $1.0 }.map { String($0.1.prefix(9)) }
        #expect(byTime == byTime.sorted())
        #expect(Set(times).count == Set(times.map(Identifiers.checkoutTime)).count)
        // A forged token may say anything: the time is clamped, the id keeps its shape.
        #expect(Identifiers.checkoutTime(-5) == "222222222")
        #expect(Identifiers.checkoutTime(.max) == "zzzzzzzzz")
        #expect(Identifiers.isCheckoutId(identifiers.checkoutId(for: token("x", created: .min)).rawValue))
    }

    @Test func anIdNeedsAnAliasOnlyWhereNeitherItNorItsOlderFormIsTheStoredOne() throws {
        let stored = identifiers.checkoutId(for: token("00000000-0000-0000-0000-000000000000", created: 1_000))
        let later = identifiers.checkoutId(for: token("00000000-0000-0000-0000-000000000000", created: 2_000))
        #expect(!stored.needsAlias(forStored: stored))
        #expect(later.needsAlias(forStored: stored))
        #expect(!later.needsAlias(forStored: try #require(later.withoutTime)))
        #expect(CheckoutID("short").needsAlias(forStored: stored))
    }

    @Test func aVisitWithoutATokenGetsAFreshIdLedByItsTime() {
        let first = identifiers.freshCheckoutId(at: 1_706_169_600_000)
        let second = identifiers.freshCheckoutId(at: 1_706_169_600_000)
        #expect(first != second)
        #expect(first.rawValue.prefix(9) == second.rawValue.prefix(9))
        #expect(Identifiers.isCheckoutId(first.rawValue))
    }

    @Test func bothLengthsAreCheckoutIdsAndNothingElse() {
        #expect(Identifiers.isCheckoutId(String(repeating: "a", count: 26)))
        #expect(Identifiers.isCheckoutId(String(repeating: "7", count: 35)))
        for text in [
            "", String(repeating: "a", count: 25), String(repeating: "a", count: 27), String(repeating: "a", count: 34),
            String(repeating: "a", count: 36), String(repeating: "A", count: 26), String(repeating: "1", count: 35),
            String(repeating: "a", count: 34) + "-",
        ] {
            #expect(!Identifiers.isCheckoutId(text), "\(text)")
        }
    }

    /// Records `id` (created at Apple's example date) as a release before 0.29.0 did, under its checkout's HMAC
    /// alone; returns that id.
    func recordedBefore(_ id: ExternalPurchaseID, in live: LiveApplication, by installation: Identifiers) throws
        -> String
    {
        let old = installation.checkoutHMAC(externalPurchaseId: id)
        _ = try live.application.ledger.tokens.recordForwardedToken(
            TokenFields(token(id.rawValue, created: 1_706_169_600_000), source: .app),
            checkoutId: CheckoutID(old),
            at: 1_706_169_660_000
        )
        return old
    }

    /// Forwards `token` as the app does (`POST /v1/tokens`); the path of the checkout URL it is given.
    func forwardedCheckoutPath(_ token: String, in live: LiveApplication) throws -> String {
        let forwarded = try live.post(
            "/v1/tokens",
            contentType: "application/json",
            body: #"{"token": "\#(token)"}"#
        )
        #expect(forwarded.status == 200)
        let reply = try JSONDecoder().decode([String: String].self, from: Data(forwarded.body))
        return String(try #require(reply["checkoutURL"]).dropFirst("http://localhost:8080".count))
    }

    /// A token recorded before ids led with a time keeps its one checkout: a later landing's id, and the URL a
    /// later forward is given, lead to it, and its page's form posts to it.
    @Test func aTokenRecordedBeforeKeepsItsOneCheckout() throws {
        let live = try LiveApplication()
        let secret = try live.application.ledger.settings.secret(named: "identifiers")
        let installation = Identifiers(secret: secret)
        let documented: ExternalPurchaseID = "00000000-0000-0000-0000-000000000000"
        let old = try recordedBefore(documented, in: live, by: installation)
        #expect(try live.get("/checkout/\(old)").status == 200)

        let landing = try live.get(AppleVectors.documentedTarget)
        #expect(landing.status == 303)
        let location = try #require(landing.header("Location"))
        let id = String(location.dropFirst("/checkout/".count))
        #expect(id == Identifiers.checkoutTime(1_706_169_600_000) + old)
        // Right after the landing (its visit perhaps not yet in the tables) and after, the same checkout.
        let page = try live.get(location)
        #expect(page.status == 200)
        #expect(page.text.contains("action=\"/checkout/\(old)\""))
        #expect(try live.ledger().tokens.checkout(id: CheckoutID(id))?.id.rawValue == old)
        #expect(try live.get(location).text.contains("action=\"/checkout/\(old)\""))
        let visits = try live.ledger().tokens.visits(for: documented)
        #expect(visits.map(\.checkoutId.rawValue) == [id])
        // A time-led id whose older form names no checkout is not found.
        #expect(try live.get("/checkout/" + Identifiers.checkoutTime(1) + old.dropFirst(1) + "a").status == 404)

        let sandbox: ExternalPurchaseID = "SANDBOX_00000000-0000-0000-0000-000000000000"
        let older = try recordedBefore(sandbox, in: live, by: installation)
        let path = try forwardedCheckoutPath(AppleVectors.v3, in: live)
        #expect(path == "/checkout/" + Identifiers.checkoutTime(1_706_169_600_000) + older)
        #expect(try live.get(path).text.contains("action=\"/checkout/\(older)\""))
    }

    /// Apple's first two examples share one externalPurchaseId with two creation dates, so their landings compute
    /// two ids: the second's redirect, and a forward's URL, lead to the checkout the first recorded, right after
    /// the landing and once its visit is in the tables.
    @Test func aTokenSeenAgainWithAnotherDateKeepsItsOneCheckout() throws {
        let live = try LiveApplication()
        let first = try live.get(AppleVectors.documentedTarget)
        let firstLocation = try #require(first.header("Location"))
        let firstId = String(firstLocation.dropFirst("/checkout/".count))
        _ = live.ledger()

        let again = try live.get("/?externalPurchaseToken=\(AppleVectors.v2)&bundleId=com.example")
        #expect(again.status == 303)
        let location = try #require(again.header("Location"))
        #expect(location != firstLocation)
        #expect(try live.get(location).text.contains("action=\"/checkout/\(firstId)\""))
        let id = CheckoutID(String(location.dropFirst("/checkout/".count)))
        #expect(try live.ledger().tokens.checkout(id: id)?.id.rawValue == firstId)
        #expect(try live.get(location).text.contains("action=\"/checkout/\(firstId)\""))
        let visits = try live.ledger().tokens.visits(for: "00000000-0000-0000-0000-000000000000")
        #expect(visits.map(\.checkoutId) == [CheckoutID(firstId), id])

        let sandbox = try live.get("/?externalPurchaseToken=\(AppleVectors.v3)&bundleId=com.example")
        let sandboxId = String(try #require(sandbox.header("Location")).dropFirst("/checkout/".count))
        _ = live.ledger()
        let path = try forwardedCheckoutPath(AppleVectors.v4, in: live)
        #expect(path != "/checkout/" + sandboxId)
        // Apple's sandbox examples expired within their hour: the page says so, with no form to post.
        #expect(try live.get(path).status == 200)
        let forwardedId = CheckoutID(String(path.dropFirst("/checkout/".count)))
        #expect(try live.ledger().tokens.checkout(id: forwardedId)?.id.rawValue == sandboxId)
    }
}
