import Crypto
import Dispatch
import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Payments
import Storage
import Synchronization
import TestSupport
import Testing

@testable import LinkOut

/// Apps without a backend, through the live routes: the app redeems its code for a signed entitlement and a
/// customer credential, checks its entitlements with the credential, and verifies them with the published keys.
/// (The same flow from outside the Swift code, with PyJWT: `scripts/app-test.sh`.)
@Suite("Apps without a backend")
struct AppEntitlementTests {
    static let form = "application/x-www-form-urlencoded"

    /// A demo purchase of `product` on the token of `landing` through the pages; returns the code from the
    /// return link and the purchase id.
    static func purchase(
        _ live: LiveApplication,
        product: String = "pro.lifetime",
        landing: String = AppleVectors.documentedTarget
    ) throws -> (code: String, purchaseId: String) {
        let landed = try live.get(landing)
        let checkout = try #require(landed.header("Location"))
        let cookie = try #require(landed.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let page = try live.get(checkout, headers: ["Cookie": cookie])
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        let payment = try #require(
            try live.post(
                checkout,
                contentType: form,
                body: "csrf=\(csrf)&currency=EUR&product=\(product)",
                headers: ["Cookie": cookie]
            ).header("Location")
        )
        let demo = try live.get(payment, headers: ["Cookie": cookie])
        let demoCSRF = try #require(demo.text.firstMatch(of: /name="csrf" value="([a-z2-7]+)"/)?.1)
        let done = try #require(
            try live.post(
                payment,
                contentType: form,
                body: "csrf=\(demoCSRF)&action=complete",
                headers: ["Cookie": cookie]
            )
            .header("Location")
        )
        let iPhone = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X)"
        let result = try live.get(done, headers: ["User-Agent": iPhone, "Cookie": cookie])
        let code = String(try #require(result.text.firstMatch(of: /open\?code=([a-z2-7]{32})/)?.1))
        let purchaseId = String(try #require(done.firstMatch(of: /session_id=(demo_[a-z2-7]+)/)?.1))
        return (code, purchaseId)
    }

    /// A key as another configuration's key file puts it in the ledger (no private half here), signing from `now`.
    static func publishKeyFileKey(in ledger: Ledger, at now: Int64) throws -> PublicJWK {
        let key = try EntitlementKey.publicJWK(of: ES256Key.generate())
        let record = SigningKeyRecord(
            kid: key.kid,
            publicJWK: try EntitlementKey.jsonText(key),
            privateKeyPEM: nil,
            createdAt: now,
            signsFrom: now
        )
        try #require(try ledger.signingKeys.insert(record))
        return key
    }

    static func json(_ response: RawClient.Response) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    static func redeem(_ live: LiveApplication, _ body: String, headers: [String: String] = [:]) throws
        -> RawClient.Response
    {
        try live.post("/v1/app/redemptions", contentType: "application/json", body: body, headers: headers)
    }

    static func entitlements(_ live: LiveApplication, _ credential: String) throws -> RawClient.Response {
        try live.get("/v1/app/entitlements", headers: ["Authorization": "Bearer \(credential)"])
    }

    struct Undecodable: Error {}

    /// The JSON object of a base64url part of a JWS.
    static func object(_ part: some StringProtocol) throws -> [String: Any] {
        guard let bytes = Base64URL.decode(Array(part.utf8)),
            let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { throw Undecodable() }
        return object
    }

    static func bytes(_ text: Any?) throws -> [UInt8] {
        guard let text = text as? String, let bytes = Base64URL.decode(Array(text.utf8)) else { throw Undecodable() }
        return bytes
    }

    /// Verifies a compact JWS the way an app does: the key its header names, from the JWKS, rebuilt from the
    /// JWK's coordinates. Returns the claims.
    static func verify(_ jws: String, _ live: LiveApplication) throws -> [String: Any] {
        let parts = jws.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let header = try object(parts[0])
        #expect(header["alg"] as? String == "ES256")
        let keys = try #require(try json(try live.get("/.well-known/jwks.json"))["keys"] as? [[String: Any]])
        let jwk = try #require(keys.first { $0["kid"] as? String == header["kid"] as? String })
        let x = try bytes(jwk["x"])
        let y = try bytes(jwk["y"])
        // SubjectPublicKeyInfo of a P-256 key: the fixed algorithm prefix, then the uncompressed point.
        let prefix: [UInt8] = [
            0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48,
            0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04,
        ]
        let pem =
            "-----BEGIN PUBLIC KEY-----\n" + Data(prefix + x + y).base64EncodedString() + "\n-----END PUBLIC KEY-----\n"
        let key = try ES256Key(pem: pem)
        #expect(
            key.verify(try bytes(parts[2]), message: Array((parts[0] + "." + parts[1]).utf8)),
            "the signature verifies"
        )
        return try object(parts[1])
    }

    @Test func theAppRedeemsVerifiesAndChecksUntilARefundEndsIt() throws {
        let time = ManualClock()
        let live = try LiveApplication(clock: time.clock) { $0.adminToken = "admin-secret" }
        let (code, purchaseId) = try Self.purchase(live)
        let first = try Self.redeem(live, #"{"code": "\#(code.uppercased())"}"#)
        #expect(first.status == 200)
        let redeemed = try Self.json(first)
        let credential = try #require(redeemed["credential"] as? String)
        #expect(Identifiers.isCredentialSecret(credential))
        let claims = try Self.verify(try #require(redeemed["entitlement"] as? String), live)
        #expect(claims["sub"] as? String == purchaseId)
        #expect(claims["aud"] as? String == "com.example")
        #expect(claims["iss"] as? String == live.application.configuration.server.publicURL)
        #expect(claims["productId"] as? String == "pro.lifetime")
        #expect(claims["kind"] as? String == "oneTime")
        #expect(claims["environment"] as? String == "production")
        #expect(claims["test"] as? Bool == true)
        #expect(claims["iat"] as? Int64 == time.clock.nowMilliseconds() / 1000)
        #expect(claims["exp"] as? Int64 == time.clock.nowMilliseconds() / 1000 + 86_400)
        // Single use, whichever route tries it next.
        let replay = try Self.redeem(live, #"{"code": "\#(code)"}"#)
        #expect(replay.status == 409 && replay.text.contains("already_redeemed"))

        let check = try Self.entitlements(live, credential)
        #expect(check.status == 200)
        let entitled = try #require(try Self.json(check)["entitlements"] as? [[String: Any]])
        #expect(entitled.count == 1)
        _ = try Self.verify(try #require(entitled.first?["entitlement"] as? String), live)

        let refund = try live.post(
            "/admin/demo/purchases/\(purchaseId)/refund",
            contentType: "application/json",
            body: "",
            headers: ["Authorization": "Bearer admin-secret"]
        )
        #expect(refund.status == 200)
        #expect(try Self.json(refund)["status"] as? String == "refunded")
        let after = try Self.json(try Self.entitlements(live, credential))
        #expect((after["entitlements"] as? [Any])?.isEmpty == true)
        let ended = try #require((after["ended"] as? [[String: Any]])?.first)
        #expect(ended["purchaseId"] as? String == purchaseId && ended["reason"] as? String == "refunded")
        // A second refund of the same purchase changes nothing.
        let again = try live.post(
            "/admin/demo/purchases/\(purchaseId)/refund",
            contentType: "application/json",
            body: "",
            headers: ["Authorization": "Bearer admin-secret"]
        )
        #expect(again.status == 409)
        // Neither the code nor the credential is in any log line.
        #expect(!live.logLines.all.contains { $0.contains(code) || $0.contains(credential) })
        #expect(live.logLines.all.contains { $0.contains("redeemed by the app") })
    }

    /// A test payment on a production token is never reported to Apple, and a subscription bought that way is
    /// refunded all the same: the purchase ends, the app loses the entitlement, a second refund is refused.
    @Test func aRefundEndsASubscriptionAppleNeverHeardOf() throws {
        let live = try LiveApplication { $0.adminToken = "admin-secret" }
        let (code, purchaseId) = try Self.purchase(live, product: "pro.monthly")
        let credential = try #require(
            try Self.json(try Self.redeem(live, #"{"code": "\#(code)"}"#))["credential"] as? String
        )
        // Asked three times at once: one refund, the others told it was made.
        let request =
            "POST /admin/demo/purchases/\(purchaseId)/refund HTTP/1.1\r\nHost: t\r\n"
            + "Authorization: Bearer admin-secret\r\nContent-Length: 0\r\n\r\n"
        let answers = Mutex<[(status: Int, body: String)]>([])
        let port = live.port
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            let answer = try? RawClient(port: port).roundTrip(request)
            answers.withLock { $0.append((answer?.status ?? 0, answer?.text ?? "")) }
        }
        let all = answers.withLock { $0 }.sorted { $0.status < $1.status }
        #expect(all.map(\.status) == [200, 409, 409], "\(all)")
        #expect(all.first?.body.contains(#""status":"refunded""#) == true, "\(all.first?.body ?? "")")
        let after = try Self.json(try Self.entitlements(live, credential))
        #expect((after["entitlements"] as? [Any])?.isEmpty == true, "\(after)")
        #expect((after["ended"] as? [[String: Any]])?.first?["reason"] as? String == "refunded")
    }

    /// A code is ASCII letters and digits, any case: a character that Unicode's lowering turns into a code letter
    /// (KELVIN SIGN into `k`) made a code that matched.
    @Test func aCodeIsReadInASCIIOnly() throws {
        let live = try LiveApplication()
        let plain = String(repeating: "k", count: 32)
        #expect(try Self.redeem(live, #"{"code": "\#(plain.uppercased())"}"#).text.contains("unknown_code"))
        let kelvin = String(repeating: "k", count: 31) + "\u{212A}"
        let refused = try Self.redeem(live, #"{"code": "\#(kelvin)"}"#)
        #expect(refused.status == 400 && refused.text.contains("invalid_code"), "\(refused.text)")
    }

    @Test func aCodeForAnotherAccountIsRefusedAndStaysUnused() throws {
        let live = try LiveApplication()
        let account = "6f1c1a52-5d3c-4c84-9a57-8f0c42e6d1a0"
        let forwarded = try live.post(
            "/v1/tokens",
            contentType: "application/json",
            body: #"{"token": "\#(AppleVectors.v1)", "appAccountToken": "\#(account.uppercased())"}"#
        )
        #expect(forwarded.status == 201)
        let (code, _) = try Self.purchase(live)
        let other = try Self.redeem(
            live,
            #"{"code": "\#(code)", "appAccountToken": "00000000-0000-4000-8000-000000000001"}"#
        )
        #expect(other.status == 409 && other.text.contains("account_mismatch"))
        #expect(try Self.redeem(live, #"{"code": "\#(code)", "appAccountToken": "not-a-uuid"}"#).status == 400)
        let right = try Self.redeem(live, #"{"code": "\#(code)", "appAccountToken": "\#(account)"}"#)
        #expect(right.status == 200)
        let claims = try Self.verify(try #require(try Self.json(right)["entitlement"] as? String), live)
        #expect(claims["appAccountToken"] as? String == account)
        let credentialId = try #require(try Self.json(right)["credentialId"] as? String)
        let stored = try #require(try live.ledger().credentials.credential(id: credentialId))
        #expect(stored.appAccountToken == account)
    }

    @Test func aSecondPurchaseJoinsTheCredentialTheAppHolds() throws {
        let live = try LiveApplication()
        let (firstCode, firstId) = try Self.purchase(live)
        let first = try Self.json(try Self.redeem(live, #"{"code": "\#(firstCode)"}"#))
        let credential = try #require(first["credential"] as? String)
        let (secondCode, secondId) = try Self.purchase(live, product: "pro.monthly")
        #expect(
            try Self.redeem(live, #"{"code": "\#(secondCode)"}"#, headers: ["Authorization": "Bearer lcr_x"]).status
                == 401
        )
        let second = try Self.json(
            try Self.redeem(live, #"{"code": "\#(secondCode)"}"#, headers: ["Authorization": "Bearer \(credential)"])
        )
        #expect(second["credential"] as? String == credential)
        #expect(second["credentialId"] as? String == first["credentialId"] as? String)
        let claims = try Self.verify(try #require(second["entitlement"] as? String), live)
        #expect(claims["kind"] as? String == "subscription")
        let purchase = try #require(try live.ledger().payments.purchase(id: secondId))
        #expect(claims["expiresDate"] as? Int64 == purchase.periodEnd)
        let listed = try #require(
            try Self.json(try Self.entitlements(live, credential))["entitlements"] as? [[String: Any]]
        )
        #expect(Set(listed.compactMap { $0["purchaseId"] as? String }) == [firstId, secondId])
    }

    @Test func anOperatorRevokesAndReissuesACredential() throws {
        let live = try LiveApplication { $0.adminToken = "admin-secret" }
        let admin = ["Authorization": "Bearer admin-secret"]
        let (code, purchaseId) = try Self.purchase(live)
        let redeemed = try Self.json(try Self.redeem(live, #"{"code": "\#(code)"}"#))
        let credential = try #require(redeemed["credential"] as? String)
        let id = try #require(redeemed["credentialId"] as? String)
        let listed = try Self.json(try live.get("/admin/credentials?purchaseId=\(purchaseId)", headers: admin))
        #expect((listed["credentials"] as? [[String: Any]])?.first?["id"] as? String == id)
        // An id no purchase has the length of is said as such, not as a missing query.
        let long = try live.get("/admin/credentials?purchaseId=\(String(repeating: "x", count: 256))", headers: admin)
        #expect(long.status == 400 && long.text.contains("invalid_query"), "\(long.text)")
        let reissued = try live.post(
            "/admin/credentials/\(id)/reissue",
            contentType: "text/plain",
            body: "",
            headers: admin
        )
        #expect(reissued.status == 201)
        let secret = try #require(try Self.json(reissued)["secret"] as? String)
        let old = try Self.entitlements(live, credential)
        #expect(old.status == 401 && old.text.contains("credential_revoked"))
        #expect(try Self.entitlements(live, secret).status == 200)
        let replacement = try #require((try Self.json(reissued)["credential"] as? [String: Any])?["id"] as? String)
        // The replaced one cannot be reissued again: that would leave two live replacements.
        let twice = try live.post(
            "/admin/credentials/\(id)/reissue",
            contentType: "text/plain",
            body: "",
            headers: admin
        )
        #expect(twice.status == 409 && twice.text.contains(replacement), "\(twice.status) \(twice.text)")
        let revoked = try live.post(
            "/admin/credentials/\(replacement)/revoke",
            contentType: "text/plain",
            body: "",
            headers: admin
        )
        #expect(revoked.status == 200)
        #expect(try Self.entitlements(live, secret).status == 401)
        // Redeeming with it says why, and the code stays unused.
        let (another, _) = try Self.purchase(
            live,
            landing: TokenMinter.exampleLanding(at: Clock.system.nowMilliseconds()).path
        )
        let withRevoked = try Self.redeem(
            live,
            #"{"code": "\#(another)"}"#,
            headers: ["Authorization": "Bearer \(secret)"]
        )
        #expect(withRevoked.status == 401 && withRevoked.text.contains("credential_revoked"), "\(withRevoked.text)")
        #expect(try Self.redeem(live, #"{"code": "\#(another)"}"#).status == 200)
        #expect(
            try live.post("/admin/credentials/cred_none/revoke", contentType: "text/plain", body: "", headers: admin)
                .status == 404
        )
    }

    /// Phones behind one carrier address share a client budget: a revoked credential (one this server issued)
    /// spends none of it, and unknown credentials spend the app routes' budget only, never the operator's.
    @Test func appCredentialsSpendTheAppsBudgetNotTheOperators() throws {
        let live = try LiveApplication { $0.adminToken = "admin-secret" }
        let admin = ["Authorization": "Bearer admin-secret"]
        let (code, _) = try Self.purchase(live)
        let redeemed = try Self.json(try Self.redeem(live, #"{"code": "\#(code)"}"#))
        let credential = try #require(redeemed["credential"] as? String)
        let id = try #require(redeemed["credentialId"] as? String)
        let revoke = try live.post(
            "/admin/credentials/\(id)/revoke",
            contentType: "text/plain",
            body: "",
            headers: admin
        )
        #expect(revoke.status == 200)
        for _ in 0..<15 {
            let answer = try Self.entitlements(live, credential)
            #expect(answer.status == 401 && answer.text.contains("credential_revoked"), "\(answer.status)")
        }
        let unknown = Identifiers.credentialSecret()
        for _ in 0..<10 { #expect(try Self.entitlements(live, unknown).status == 401) }
        let blocked = try Self.entitlements(live, unknown)
        #expect(blocked.status == 429 && blocked.header("Retry-After") != nil, "\(blocked.status)")
        #expect(try live.get("/admin/audit", headers: admin).status == 200)
    }

    /// On the redemption route too, where an app presents its credential to add a purchase: a revoked one spends
    /// none of the client's budget (the rate limit is off here, so only the budget can answer 429).
    @Test func aRevokedCredentialPresentedToRedeemSpendsNothing() throws {
        let live = try LiveApplication {
            $0.adminToken = "admin-secret"
            $0.server.rateLimitPerSecond = 0
        }
        let (code, _) = try Self.purchase(live)
        let redeemed = try Self.json(try Self.redeem(live, #"{"code": "\#(code)"}"#))
        let credential = try #require(redeemed["credential"] as? String)
        let id = try #require(redeemed["credentialId"] as? String)
        let revoke = try live.post(
            "/admin/credentials/\(id)/revoke",
            contentType: "text/plain",
            body: "",
            headers: ["Authorization": "Bearer admin-secret"]
        )
        #expect(revoke.status == 200)
        for _ in 0..<15 {
            let answer = try Self.redeem(
                live,
                #"{"code": "\#(code)"}"#,
                headers: ["Authorization": "Bearer \(credential)"]
            )
            #expect(answer.status == 401 && answer.text.contains("credential_revoked"), "\(answer.status)")
        }
        let unknown = Identifiers.credentialSecret()
        for _ in 0..<10 { #expect(try Self.entitlements(live, unknown).status == 401) }
        #expect(try Self.entitlements(live, unknown).status == 429)
    }

    /// A key rotated in ahead and retired by another process (`linkout keys retire`) before its start never signs:
    /// the server reads the keys again when one begins, not only once a minute (it signed for up to a minute with
    /// a key the JWKS no longer had).
    @Test func aKeyRetiredBeforeItsStartNeverSigns() throws {
        let time = ManualClock()
        let live = try LiveApplication(clock: time.clock) { $0.adminToken = "admin-secret" }
        let (code, _) = try Self.purchase(live)
        let credential = try #require(
            try Self.json(try Self.redeem(live, #"{"code": "\#(code)"}"#))["credential"] as? String
        )
        let rotated = try live.post(
            "/admin/signing-keys/rotate?publishAheadSeconds=15",
            contentType: "text/plain",
            body: "",
            headers: ["Authorization": "Bearer admin-secret"]
        )
        let planned = try #require(try Self.json(rotated)["kid"] as? String)
        // Another process retires it (the command line writes the ledger; this server's keys were read before).
        #expect(try live.application.ledger.signingKeys.retire(kid: planned, at: time.clock.nowMilliseconds()))
        time.advance(seconds: 16)
        let signed = try #require(
            (try Self.json(try Self.entitlements(live, credential))["entitlements"] as? [[String: Any]])?.first?[
                "entitlement"
            ] as? String
        )
        #expect(try Self.object(signed.split(separator: ".")[0])["kid"] as? String != planned)
        _ = try Self.verify(signed, live)
    }

    /// A key file named once and then no longer (its key began signing last, this server holds no private half of
    /// it): the generated key signs, a rotation replaces the file's key, and the file's key can be retired.
    /// With no key to sign at all, the app is told to come back (503), not answered 500.
    @Test func aKeyFileLeftBehindNeitherBlocksRotationNorFailsTheApp() throws {
        let time = ManualClock()
        let live = try LiveApplication(clock: time.clock) { $0.adminToken = "admin-secret" }
        let admin = ["Authorization": "Bearer admin-secret"]
        let (code, _) = try Self.purchase(live)
        let credential = try #require(
            try Self.json(try Self.redeem(live, #"{"code": "\#(code)"}"#))["credential"] as? String
        )
        time.advance(seconds: 1)
        let fileKey = try Self.publishKeyFileKey(in: live.application.ledger, at: time.clock.nowMilliseconds())
        time.advance(seconds: 61)
        let generated = try #require(
            (try Self.json(try Self.entitlements(live, credential))["entitlements"] as? [[String: Any]])?.first?[
                "entitlement"
            ] as? String
        )
        let generatedKid = try #require(try Self.object(generated.split(separator: ".")[0])["kid"] as? String)
        #expect(generatedKid != fileKey.kid)
        // The file's key is retired once forced (it may still sign where that file is named), and a rotation is
        // taken.
        let retireFile = try live.post(
            "/admin/signing-keys/\(fileKey.kid)/retire?force=true",
            contentType: "text/plain",
            body: "",
            headers: admin
        )
        #expect(retireFile.status == 200, "\(retireFile.text)")
        #expect(
            try live.post("/admin/signing-keys/rotate", contentType: "text/plain", body: "", headers: admin).status
                == 201
        )
        // Force-retiring the generated key that signs is refused; with nothing else to sign, were it gone, the app
        // gets a 503 (checked by retiring it behind the server's back, as another process could).
        #expect(try live.application.ledger.signingKeys.keys().count == 2)
        let all = try live.application.ledger.signingKeys.keys()
        for key in all {
            _ = try live.application.ledger.signingKeys.retire(kid: key.kid, at: time.clock.nowMilliseconds())
        }
        time.advance(seconds: 61)
        let none = try Self.entitlements(live, credential)
        #expect(none.status == 503 && none.text.contains("signing_unavailable"), "\(none.status) \(none.text)")
        // A redemption then is refused the same way and leaves its code unused: answered 200 without the
        // entitlement, it read as "entitled to nothing", and the code was gone.
        let (unusedCode, _) = try Self.purchase(
            live,
            landing: TokenMinter.exampleLanding(at: time.clock.nowMilliseconds()).path
        )
        let unsigned = try Self.redeem(live, #"{"code": "\#(unusedCode)"}"#)
        #expect(unsigned.status == 503 && unsigned.text.contains("signing_unavailable"), "\(unsigned.text)")
        #expect(unsigned.header("Retry-After") == "60")
        // Asked again and again through the outage from one address: never taken for guessing.
        for _ in 0..<11 {
            #expect(try Self.redeem(live, #"{"code": "\#(unusedCode)"}"#).status == 503)
        }
        // A code used before is still told so, with its purchase, outage or not.
        let used = try Self.redeem(live, #"{"code": "\#(code)"}"#)
        #expect(used.status == 409 && used.text.contains("already_redeemed"), "\(used.status) \(used.text)")
        let rotated = try live.post(
            "/admin/signing-keys/rotate?publishAheadSeconds=0",
            contentType: "text/plain",
            body: "",
            headers: admin
        )
        #expect(rotated.status == 201, "\(rotated.text)")
        time.advance(seconds: 61)
        let redeemed = try Self.redeem(live, #"{"code": "\#(unusedCode)"}"#)
        #expect(redeemed.status == 200, "\(redeemed.text)")
        #expect(try Self.json(redeemed)["entitlement"] as? String != nil)
    }

    @Test func aRotatedKeySignsAndTheOldOneStaysPublishedUntilWhatItSignedExpired() throws {
        let time = ManualClock()
        let live = try LiveApplication(clock: time.clock) { $0.adminToken = "admin-secret" }
        let admin = ["Authorization": "Bearer admin-secret"]
        let (code, _) = try Self.purchase(live)
        let redeemed = try Self.json(try Self.redeem(live, #"{"code": "\#(code)"}"#))
        let before = try #require(redeemed["entitlement"] as? String)
        let credential = try #require(redeemed["credential"] as? String)
        time.advance(seconds: 60)
        let rotated = try live.post(
            "/admin/signing-keys/rotate?publishAheadSeconds=0",
            contentType: "text/plain",
            body: "",
            headers: admin
        )
        #expect(rotated.status == 201)
        let newKid = try #require(try Self.json(rotated)["kid"] as? String)
        let oldKid = try #require(
            try Self.json(try live.get("/admin/signing-keys", headers: admin))["keys"] as? [[String: Any]]
        ).compactMap { $0["kid"] as? String }.first { $0 != newKid }
        _ = try Self.verify(before, live)  // signed before the rotation, still verifies
        let after = try #require(
            (try Self.json(try Self.entitlements(live, credential))["entitlements"] as? [[String: Any]])?.first?[
                "entitlement"
            ] as? String
        )
        #expect(after.contains(".") && !after.isEmpty)
        #expect(try Self.object(after.split(separator: ".")[0])["kid"] as? String == newKid)
        let retire = { (kid: String) throws in
            try live.post("/admin/signing-keys/\(kid)/retire", contentType: "text/plain", body: "", headers: admin)
        }
        let oldId = try #require(oldKid)
        #expect(try retire(oldId).status == 409)  // what it signed is valid for a day yet
        #expect(try retire(newKid).status == 409)  // it signs now
        time.advance(seconds: 86_400)
        #expect(try retire(oldId).status == 409)  // an instance may have signed with it for a minute more
        time.advance(seconds: 60)
        #expect(try retire(oldId).status == 200)
        let published = try #require(try Self.json(try live.get("/.well-known/jwks.json"))["keys"] as? [[String: Any]])
        #expect(published.compactMap { $0["kid"] as? String } == [newKid])
        #expect(try retire("no-such-key").status == 404)
        // A key that leaked is taken out at once, whatever it signed.
        time.advance(seconds: 60)
        let third = try live.post("/admin/signing-keys/rotate", contentType: "text/plain", body: "", headers: admin)
        let thirdKid = try #require(try Self.json(third)["kid"] as? String)
        // Published now, signing only once clients that cache the JWKS can have fetched it.
        #expect(try Self.json(third)["signsFrom"] as? Int64 == time.clock.nowMilliseconds() + 360_000)
        time.advance(seconds: 360)
        #expect(try retire(newKid).status == 409)
        let forced = try live.post(
            "/admin/signing-keys/\(newKid)/retire?force=true",
            contentType: "text/plain",
            body: "",
            headers: admin
        )
        #expect(forced.status == 200)
        let left = try #require(try Self.json(try live.get("/.well-known/jwks.json"))["keys"] as? [[String: Any]])
        #expect(left.compactMap { $0["kid"] as? String } == [thirdKid])
    }

    /// A key file switched back (A, then B, then A again): A signs again from then, so B's retirement waits for
    /// what B signed, as after any rotation. Before, B counted as the newest key and could be retired at once.
    @Test func aKeyFileSwitchedBackLetsTheKeyItReplacedGoOnlyOnceWhatItSignedExpired() throws {
        let time = ManualClock()
        let folder = try Self.keyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (fileA, fileB) = try Self.keyFiles(in: folder)
        // Named apart: on PostgreSQL a data folder's name picks its schema.
        let dataDir = folder.appendingPathComponent("switch-\(UUID())")
        let signedKid = { (live: LiveApplication) throws -> String? in
            let (code, _) = try Self.purchase(
                live,
                landing: TokenMinter.exampleLanding(at: time.clock.nowMilliseconds()).path
            )
            let signed = try #require(
                try Self.json(try Self.redeem(live, #"{"code": "\#(code)"}"#))["entitlement"] as? String
            )
            return try Self.object(signed.split(separator: ".")[0])["kid"] as? String
        }
        let serve = { (file: URL) throws -> LiveApplication in
            try LiveApplication(dataDir: dataDir, clock: time.clock) {
                $0.appEntitlements.signingKeyFile = file.path
                $0.adminToken = "admin-secret"
            }
        }
        // A start signs with its key file and stops; a minute later the next one.
        let kidA = try #require(try signedKid(try serve(fileA)))
        time.advance(seconds: 60)
        let kidB = try #require(try signedKid(try serve(fileB)))
        time.advance(seconds: 60)
        let live = try serve(fileA)
        #expect(try signedKid(live) == kidA)
        let retire = {
            try live.post(
                "/admin/signing-keys/\(kidB)/retire",
                contentType: "text/plain",
                body: "",
                headers: ["Authorization": "Bearer admin-secret"]
            )
        }
        #expect(try retire().status == 409)  // what B signed a minute ago is valid for a day yet
        time.advance(seconds: 86_400 + 60)
        #expect(try retire().status == 200)
        // The switches are in the audit log: the key file's key id changed at each start.
        let switches = try live.ledger().audit.entries(limit: 100).filter { $0.action == "config.entitlement_signing" }
        #expect(switches.count == 3)
        #expect(switches.allSatisfy { $0.after?.hasPrefix("key file ") == true })
    }

    /// An entitlement bought and signed, then a rotation that signs at once (the admin token `admin-secret`);
    /// returns the key that signed it.
    static func signThenRotate(_ live: LiveApplication) throws -> String {
        let (code, _) = try purchase(live)
        let signed = try #require(try json(try redeem(live, #"{"code": "\#(code)"}"#))["entitlement"] as? String)
        let kid = try #require(try object(signed.split(separator: ".")[0])["kid"] as? String)
        let rotated = try live.post(
            "/admin/signing-keys/rotate?publishAheadSeconds=0",
            contentType: "text/plain",
            body: "",
            headers: ["Authorization": "Bearer admin-secret"]
        )
        #expect(rotated.status == 201)
        return kid
    }

    /// A key signed with a day's lifetime, the configuration then shortened it to five minutes: the key's
    /// retirement still waits the day, the longest lifetime it signed with.
    @Test func aShortenedLifetimeDoesNotLetAKeyGoWhileWhatItSignedIsValid() throws {
        let time = ManualClock()
        let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-keys-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dataDir) }
        let admin = ["Authorization": "Bearer admin-secret"]
        let oldKid: String
        do {
            let live = try LiveApplication(dataDir: dataDir, clock: time.clock) { $0.adminToken = "admin-secret" }
            time.advance(seconds: 60)
            oldKid = try Self.signThenRotate(live)
        }
        let live = try LiveApplication(dataDir: dataDir, clock: time.clock) {
            $0.adminToken = "admin-secret"
            $0.appEntitlements.lifetimeSeconds = 300
        }
        let retire = {
            try live.post("/admin/signing-keys/\(oldKid)/retire", contentType: "text/plain", body: "", headers: admin)
        }
        time.advance(seconds: 600)
        #expect(try retire().status == 409)  // signed with a day's lifetime: valid for most of it yet
        time.advance(seconds: 86_400)
        #expect(try retire().status == 200)
    }

    /// A rolling change on one PostgreSQL ledger: an instance not yet restarted signs with the old key after
    /// its successor began signing elsewhere. Each instance notes its signing (at most once a minute), so the old
    /// key's retirement waits a lifetime after the last note, not after the successor's start.
    @Test func aKeyAnotherInstanceStillSignsWithWaitsForItsLastSignature() throws {
        let time = ManualClock()
        let live = try LiveApplication(clock: time.clock) { $0.adminToken = "admin-secret" }
        let admin = ["Authorization": "Bearer admin-secret"]
        let oldKid = try Self.signThenRotate(live)
        // An hour on, another instance still signs with the old key (as its note in the ledger says).
        time.advance(seconds: 3_600)
        try live.ledger().signingKeys.recordSigning(
            kid: oldKid,
            lifetimeSeconds: 86_400,
            at: time.clock.nowMilliseconds()
        )
        let retire = {
            try live.post("/admin/signing-keys/\(oldKid)/retire", contentType: "text/plain", body: "", headers: admin)
        }
        time.advance(seconds: 86_400 - 3_600 + 120)
        #expect(try retire().status == 409)  // a day after the rotation, but not after the last signature
        time.advance(seconds: 3_600)
        #expect(try retire().status == 200)
    }

    /// A rolling change to a key file on one PostgreSQL ledger: another instance starts with a key file (its key
    /// begins signing, and this instance sees it within a minute). This instance, still on generated keys, keeps
    /// signing with its own key, which stays published; it refused every entitlement (a 500) and redeemed codes
    /// without one.
    @Test func anInstanceOnGeneratedKeysKeepsSigningWhenAnotherStartsWithAKeyFile() throws {
        let time = ManualClock()
        let live = try LiveApplication(clock: time.clock)
        let (code, _) = try Self.purchase(live)
        let redeemed = try Self.json(try Self.redeem(live, #"{"code": "\#(code)"}"#))
        let credential = try #require(redeemed["credential"] as? String)
        let first = try #require(redeemed["entitlement"] as? String)
        let generated = try #require(try Self.object(first.split(separator: ".")[0])["kid"] as? String)
        _ = try Self.publishKeyFileKey(in: live.ledger(), at: time.clock.nowMilliseconds())
        time.advance(seconds: 61)
        let answer = try Self.entitlements(live, credential)
        #expect(answer.status == 200, "\(answer.status) \(answer.text)")
        let list = try #require(try Self.json(answer)["entitlements"] as? [[String: Any]])
        let signed = try #require(list.first?["entitlement"] as? String)
        #expect(try Self.object(signed.split(separator: ".")[0])["kid"] as? String == generated)
        _ = try Self.verify(signed, live)
    }

    /// The leaked-key procedure while a planned rotation waits: `rotate --publish-ahead 0` signs at once (the
    /// planned key does not hold it back), the leaked key can then be retired, and the planned key still takes
    /// over at its time.
    @Test func aLeakedKeyIsReplacedAtOnceWhileARotationIsPlanned() throws {
        let time = ManualClock()
        let live = try LiveApplication(clock: time.clock) { $0.adminToken = "admin-secret" }
        let admin = ["Authorization": "Bearer admin-secret"]
        let leaked = try #require(
            try Self.json(try live.get("/admin/signing-keys", headers: admin))["keys"] as? [[String: Any]]
        ).compactMap { $0["kid"] as? String }.first
        let rotate = { (ahead: Int) throws -> [String: Any] in
            let answer = try live.post(
                "/admin/signing-keys/rotate?publishAheadSeconds=\(ahead)",
                contentType: "text/plain",
                body: "",
                headers: admin
            )
            #expect(answer.status == 201)
            return try Self.json(answer)
        }
        time.advance(seconds: 60)
        let planned = try rotate(86_400)
        time.advance(seconds: 60)
        let urgent = try rotate(0)
        #expect(urgent["signsFrom"] as? Int64 == time.clock.nowMilliseconds())
        time.advance(seconds: 1)
        let retired = try live.post(
            "/admin/signing-keys/\(try #require(leaked))/retire?force=true",
            contentType: "text/plain",
            body: "",
            headers: admin
        )
        #expect(retired.status == 200, "\(retired.text)")
        let signingKid = { () throws -> String? in
            let (code, _) = try Self.purchase(
                live,
                landing: TokenMinter.exampleLanding(at: time.clock.nowMilliseconds()).path
            )
            let redeemed = try Self.json(try Self.redeem(live, #"{"code": "\#(code)"}"#))
            let entitlement = try #require(redeemed["entitlement"] as? String)
            return try Self.object(entitlement.split(separator: ".")[0])["kid"] as? String
        }
        #expect(try signingKid() == urgent["kid"] as? String)
        time.advance(seconds: 86_400)
        #expect(try signingKid() == planned["kid"] as? String)
    }

    /// A throwaway folder for key files (the caller removes it).
    static func keyFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-keys-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Two new P-256 key files in `folder`.
    static func keyFiles(in folder: URL) throws -> (URL, URL) {
        let first = folder.appendingPathComponent("first.pem")
        let second = folder.appendingPathComponent("second.pem")
        try ES256Key.generate().privateKeyPEM().write(to: first, atomically: true, encoding: .utf8)
        try ES256Key.generate().privateKeyPEM().write(to: second, atomically: true, encoding: .utf8)
        return (first, second)
    }

    @Test func aKeyFileSignsAndStaysPublishedAfterItIsReplaced() throws {
        let folder = try Self.keyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (first, second) = try Self.keyFiles(in: folder)
        let dataDir = folder.appendingPathComponent("data")
        var firstKid = ""
        do {
            let live = try LiveApplication(dataDir: dataDir) {
                $0.appEntitlements.signingKeyFile = first.path
                $0.adminToken = "admin-secret"
            }
            let keys = try #require(try Self.json(try live.get("/.well-known/jwks.json"))["keys"] as? [[String: Any]])
            #expect(keys.count == 1)
            firstKid = try #require(keys.first?["kid"] as? String)
            let rotation = try live.post(
                "/admin/signing-keys/rotate",
                contentType: "text/plain",
                body: "",
                headers: ["Authorization": "Bearer admin-secret"]
            )
            #expect(rotation.status == 409 && rotation.text.contains("key_from_file"))
        }
        do {
            let live = try LiveApplication(dataDir: dataDir) { $0.appEntitlements.signingKeyFile = second.path }
            let (code, _) = try Self.purchase(live)
            let signed = try #require(
                try Self.json(try Self.redeem(live, #"{"code": "\#(code)"}"#))["entitlement"] as? String
            )
            _ = try Self.verify(signed, live)
            let kids = try #require(
                try Self.json(try live.get("/.well-known/jwks.json"))["keys"] as? [[String: Any]]
            ).compactMap { $0["kid"] as? String }
            #expect(kids.count == 2 && kids.contains(firstKid))
            // The operator's tools, with a configuration that names no key file, add no key by opening the ledger.
            // A rotation there is taken (a key file left behind must not block one for good), and the server goes
            // on signing with its file: a key file signs wherever it is named.
            var tools = live.application.configuration
            tools.appEntitlements.signingKeyFile = ""
            let administration = try AppAccessAdministration(configuration: tools, ledger: live.ledger())
            #expect(try administration.keys().count == 2)
            let generated = try administration.rotate(publishAheadSeconds: 0)
            let (another, _) = try Self.purchase(
                live,
                landing: TokenMinter.exampleLanding(at: Clock.system.nowMilliseconds()).path
            )
            let stillFile = try #require(
                try Self.json(try Self.redeem(live, #"{"code": "\#(another)"}"#))["entitlement"] as? String
            )
            let fileKid = try Self.object(signed.split(separator: ".")[0])["kid"] as? String
            #expect(try Self.object(stillFile.split(separator: ".")[0])["kid"] as? String == fileKid)
            #expect(fileKid != generated.kid)
            try administration.retire(kid: firstKid, force: true)
        }
        // A key file whose key was retired signs nothing any more: refused at start.
        #expect(throws: ConfigurationError.self) {
            _ = try LiveApplication(dataDir: dataDir) { $0.appEntitlements.signingKeyFile = first.path }
        }
        let bad = folder.appendingPathComponent("bad.pem")
        try "not a key".write(to: bad, atomically: true, encoding: .utf8)
        #expect(throws: ConfigurationError.self) {
            _ = try LiveApplication { $0.appEntitlements.signingKeyFile = bad.path }
        }
    }
}

/// The rule both app routes share: what a purchase entitles to at a moment.
@Suite("Entitlement policy")
struct EntitlementPolicyTests {
    static func purchase(kind: PurchaseKind, status: PurchaseStatus, periodEnd: Int64? = nil) -> PurchaseRecord {
        PurchaseRecord(
            purchaseId: "p",
            provider: .demo,
            checkoutId: nil,
            externalPurchaseId: nil,
            bundleId: "com.example",
            productId: "pro",
            kind: kind,
            status: status,
            currency: "EUR",
            amountTotal: 100,
            amountTax: 0,
            taxCountry: "DEU",
            subscriptionId: nil,
            buyLineItemId: nil,
            periodEnd: periodEnd,
            paidDays: 0,
            createdAt: 0,
            updatedAt: 0
        )
    }

    @Test func refundsAndCancellationsEndItRenewalsExtendIt() {
        let policy = EntitlementPolicy(renewalGraceMilliseconds: 1000)
        #expect(policy.state(of: Self.purchase(kind: .oneTime, status: .paid), at: 5) == .active(until: nil))
        #expect(
            policy.state(of: Self.purchase(kind: .oneTime, status: .partiallyRefunded), at: 5) == .active(until: nil)
        )
        #expect(
            policy.state(of: Self.purchase(kind: .oneTime, status: .refunded), at: 5) == .ended(reason: "refunded")
        )
        let subscription = Self.purchase(kind: .subscription, status: .paid, periodEnd: 10_000)
        #expect(policy.state(of: subscription, at: 10_999) == .active(until: 11_000))
        #expect(policy.state(of: subscription, at: 11_000) == .ended(reason: "period_over"))
        var renewed = subscription
        renewed.periodEnd = 20_000  // a renewal moves the paid period on
        #expect(policy.state(of: renewed, at: 11_000) == .active(until: 21_000))
        renewed.status = .ended
        #expect(policy.state(of: renewed, at: 11_000) == .ended(reason: "subscription_ended"))
    }
}
