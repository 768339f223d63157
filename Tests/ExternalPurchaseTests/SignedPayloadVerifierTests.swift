import Crypto
import Domain
import Foundation
import TestSupport
import Testing

@testable import ExternalPurchase

@Suite("Signed notification payloads")
struct SignedPayloadVerifierTests {
    /// Milliseconds of a moment in the test chain's validity (2025-01-01).
    static let signedDate = TestPKI.middle * 1000

    func reason(_ verifier: SignedPayloadVerifier, _ jws: String) -> SignedPayloadError.Reason? {
        do {
            _ = try verifier.verify(jws)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func aGenuinePayloadVerifiesAndDecodes() throws {
        let pki = try TestPKI()
        let jws = try pki.sign(payload: TestPKI.unreportedPayload(signedDate: Self.signedDate))
        let payload = try pki.verifier().verify(jws)
        #expect(payload.notificationType == .externalPurchaseToken)
        #expect(payload.subtype == .unreported)
        #expect(payload.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(payload.version == "2.0")
        #expect(payload.signedDate == Self.signedDate)
        #expect(payload.data == nil)
        #expect(
            payload.externalPurchaseToken
                == ExternalPurchaseToken(
                    appAppleId: 55555,
                    bundleId: "com.example",
                    tokenCreationDate: 1_698_148_950_000,
                    externalPurchaseId: "b2158121-7af9-49d4-9561-1f588205523e"
                )
        )
        #expect(payload.environment == .production)
    }

    @Test func theSandboxTwinIsSandbox() throws {
        // Apple's sandbox example differs only by the SANDBOX prefix of externalPurchaseId (App Store Server Library
        // test resources; "Receiving and decoding external purchase tokens").
        let pki = try TestPKI()
        let payload = TestPKI.unreportedPayload(
            signedDate: Self.signedDate,
            externalPurchaseId: "SANDBOX_b2158121-7af9-49d4-9561-1f588205523e"
        )
        #expect(try pki.verifier().verify(try pki.sign(payload: payload)).environment == .sandbox)
    }

    @Test func aTamperedPayloadHasABadSignature() throws {
        let pki = try TestPKI()
        let jws = try pki.sign(payload: TestPKI.unreportedPayload(signedDate: Self.signedDate))
        let parts = jws.split(separator: ".").map(String.init)
        let forged = TestPKI.unreportedPayload(signedDate: Self.signedDate, externalPurchaseId: "forged")
        let tampered = parts[0] + "." + Base64URL.encode(Array(forged.utf8)) + "." + parts[2]
        #expect(reason(try pki.verifier(), tampered) == .badSignature)
        // A signature by another key over the same input, and one cut short.
        let other = try ES256Key.generate().sign(Array((parts[0] + "." + parts[1]).utf8))
        #expect(reason(try pki.verifier(), parts[0] + "." + parts[1] + "." + Base64URL.encode(other)) == .badSignature)
        #expect(
            reason(try pki.verifier(), parts[0] + "." + parts[1] + "." + String(parts[2].dropLast(4))) == .badSignature
        )
    }

    @Test func aLeafWithoutApplesReceiptSignerOIDIsRefused() throws {
        let pki = try TestPKI(leafOIDs: ["1.2.840.113635.100.6.11.2"])
        let jws = try pki.sign(payload: TestPKI.unreportedPayload(signedDate: Self.signedDate))
        #expect(reason(try pki.verifier(), jws) == .missingAppleOID)
    }

    @Test func anIntermediateWithoutApplesWWDROIDIsRefused() throws {
        // Apple's leaf OID on the intermediate does not stand in for the intermediate's own.
        let pki = try TestPKI(intermediateOIDs: [SignedPayloadVerifier.leafOID])
        let jws = try pki.sign(payload: TestPKI.unreportedPayload(signedDate: Self.signedDate))
        #expect(reason(try pki.verifier(), jws) == .missingAppleOID)
    }

    @Test func validityIsJudgedAtSignedDate() throws {
        // The leaf lived through 2020 only, as Apple's leaves live about two years; "now" is long after.
        let pki = try TestPKI(leafValidity: TestPKI.start...(TestPKI.start + 366 * 86_400))
        let inside = (TestPKI.start + 180 * 86_400) * 1000
        let payload = try pki.verifier().verify(try pki.sign(payload: TestPKI.unreportedPayload(signedDate: inside)))
        #expect(payload.signedDate == inside)
        let after = try pki.sign(payload: TestPKI.unreportedPayload(signedDate: Self.signedDate))
        #expect(reason(try pki.verifier(), after) == .expiredAtSignedDate)
        let before = try pki.sign(payload: TestPKI.unreportedPayload(signedDate: (TestPKI.start - 86_400) * 1000))
        #expect(reason(try pki.verifier(), before) == .expiredAtSignedDate)
    }

    /// `signedDate` is read before the chain is checked, from anyone: one before 1970 is refused as malformed,
    /// whoever signed it (Int64.min once trapped in rounding it down to seconds and stopped the server).
    @Test(arguments: [Int64.min, Int64.min + 998, -9_223_372_036_854_775_000, -1])
    func aSignedDateBefore1970IsMalformed(signedDate: Int64) throws {
        let pki = try TestPKI()
        let own = try pki.sign(payload: TestPKI.unreportedPayload(signedDate: signedDate))
        #expect(reason(try pki.verifier(), own) == .malformedPayload)
        let stranger = try TestPKI().sign(payload: TestPKI.unreportedPayload(signedDate: signedDate))
        #expect(reason(try pki.verifier(), stranger) == .malformedPayload)
    }

    @Test func aChainToAnotherRootIsUntrusted() throws {
        let trusted = try TestPKI()
        let stranger = try TestPKI()
        let jws = try stranger.sign(payload: TestPKI.unreportedPayload(signedDate: Self.signedDate))
        #expect(reason(try trusted.verifier(), jws) == .untrustedChain)
    }

    @Test func aChainThatShipsItsOwnRootIsUntrusted() throws {
        // The rogue root is self-signed, named like the trusted one and rides along in x5c as Apple's does;
        // only the configured root is an anchor.
        let trusted = try TestPKI(rootName: "Apple Root CA - G3")
        let rogue = try TestPKI(rootName: "Apple Root CA - G3")
        let jws = try rogue.sign(payload: TestPKI.unreportedPayload(signedDate: Self.signedDate))
        #expect(reason(try trusted.verifier(), jws) == .untrustedChain)
        // The trusted root in third place does not lend trust to a rogue leaf and intermediate either.
        let borrowed = [rogue.x5c[0], rogue.x5c[1], trusted.x5c[2]]
        let jwsBorrowed = try rogue.sign(payload: TestPKI.unreportedPayload(signedDate: Self.signedDate), x5c: borrowed)
        #expect(reason(try trusted.verifier(), jwsBorrowed) == .untrustedChain)
    }

    @Test func aLeafSignedStraightByTheRootIsRefusedThoughTheIntermediateRidesAlong() throws {
        // OpenSSL would build leaf → root and leave the genuine intermediate (with its WWDR marker) unused.
        var pki = try TestPKI()
        pki.leaf = try X509Certificate.Builder(
            commonName: "Test Leaf",
            serialNumber: 4,
            notBefore: TestPKI.start,
            notAfter: TestPKI.end,
            isCertificateAuthority: false,
            markerOIDs: [SignedPayloadVerifier.leafOID]
        ).sign(subjectKey: pki.leafKey, issuer: pki.root, issuerKey: pki.rootKey)
        let jws = try pki.sign(payload: TestPKI.unreportedPayload(signedDate: Self.signedDate))
        #expect(reason(try pki.verifier(), jws) == .untrustedChain)
    }

    @Test func theShippedAppleRootRefusesTestChains() throws {
        let pki = try TestPKI()
        let jws = try pki.sign(payload: TestPKI.unreportedPayload(signedDate: Self.signedDate))
        #expect(reason(try SignedPayloadVerifier(), jws) == .untrustedChain)
    }

    @Test func algorithmsOtherThanES256AreRefused() throws {
        let pki = try TestPKI()
        let payload = TestPKI.unreportedPayload(signedDate: Self.signedDate)
        let verifier = try pki.verifier()
        let body = Base64URL.encode(Array(payload.utf8))
        for alg in ["none", "None", "HS256", "RS256", "ES384", "es256"] {
            let header = Base64URL.encode(
                try JSONSerialization.data(withJSONObject: ["alg": alg, "x5c": pki.x5c], options: [.sortedKeys])
            )
            #expect(reason(verifier, header + "." + body + ".") == .unsupportedAlgorithm, "alg \(alg)")
            // HS256 keyed with the leaf's public key: the classic algorithm-confusion forgery.
            let mac = HMACSHA256(key: Array(pki.leaf.publicKeyPEM.utf8)).authenticate(header + "." + body)
            #expect(reason(verifier, header + "." + body + "." + Base64URL.encode(mac)) == .unsupportedAlgorithm)
        }
        #expect(reason(verifier, try pki.sign(payload: payload, header: ["x5c": pki.x5c])) == .unsupportedAlgorithm)
    }

    /// An extension the header marks critical must be understood or the JWS refused (RFC 7515 §4.1.11): this
    /// verifier understands none, so a validly signed JWS that lists one is refused.
    @Test func aCriticalExtensionIsRefused() throws {
        let pki = try TestPKI()
        let payload = TestPKI.unreportedPayload(signedDate: Self.signedDate)
        let verifier = try pki.verifier()
        let header: [String: Any] = ["alg": "ES256", "x5c": pki.x5c, "crit": ["zzz"], "zzz": 1]
        #expect(reason(verifier, try pki.sign(payload: payload, header: header)) == .malformedJWS)
        #expect(reason(verifier, try pki.sign(payload: payload)) == nil)
    }

    @Test func exactlyThreeCertificatesAreAccepted() throws {
        let pki = try TestPKI()
        let payload = TestPKI.unreportedPayload(signedDate: Self.signedDate)
        let verifier = try pki.verifier()
        let two = Array(pki.x5c.prefix(2))
        let four = pki.x5c + [pki.x5c[2]]
        #expect(reason(verifier, try pki.sign(payload: payload, x5c: two)) == .wrongCertificateCount)
        #expect(reason(verifier, try pki.sign(payload: payload, x5c: four)) == .wrongCertificateCount)
        #expect(reason(verifier, try pki.sign(payload: payload, x5c: [])) == .wrongCertificateCount)
        #expect(reason(verifier, try pki.sign(payload: payload, header: ["alg": "ES256"])) == .wrongCertificateCount)
        let notAList = try pki.sign(payload: payload, header: ["alg": "ES256", "x5c": "one"])
        #expect(reason(verifier, notAList) == .wrongCertificateCount)
    }

    @Test func certificatesMustBeStandardBase64DER() throws {
        let pki = try TestPKI()
        let payload = TestPKI.unreportedPayload(signedDate: Self.signedDate)
        let verifier = try pki.verifier()
        let garbage = Data("not a certificate".utf8).base64EncodedString()
        let urlAlphabet = Base64URL.encode(pki.leaf.der)
        for x5c in [
            [garbage, pki.x5c[1], pki.x5c[2]], ["%%%", pki.x5c[1], pki.x5c[2]], [pki.x5c[0], "", pki.x5c[2]],
        ] {
            #expect(reason(verifier, try pki.sign(payload: payload, x5c: x5c)) == .badCertificate)
        }
        if urlAlphabet.contains(where: { $0 == "-" || $0 == "_" }) {
            let jws = try pki.sign(payload: payload, x5c: [urlAlphabet, pki.x5c[1], pki.x5c[2]])
            #expect(reason(verifier, jws) == .badCertificate)
        }
    }

    @Test(arguments: [
        "", "garbage", "a.b", "a.b.c.d", "...", "!!!.e30.c2ln", "e30", "bm90IGpzb24.e30.c2ln", "W10.e30.c2ln",
        String(repeating: "A", count: 70_000) + ".e30.c2ln",
    ])
    func garbageIsMalformed(text: String) throws {
        #expect(reason(try SignedPayloadVerifier(), text) == .malformedJWS)
    }

    @Test func aSignedPayloadThatIsNotANotificationIsMalformed() throws {
        let pki = try TestPKI()
        let verifier = try pki.verifier()
        #expect(reason(verifier, try pki.sign(payload: "not json")) == .malformedPayload)
        #expect(reason(verifier, try pki.sign(payload: #"{"notificationType":"TEST"}"#)) == .malformedPayload)
        let noUUID = #"{"notificationType":"TEST","signedDate":\#(Self.signedDate)}"#
        #expect(reason(verifier, try pki.sign(payload: noUUID)) == .malformedPayload)
        // The chain is checked before the payload is decoded: a stranger's chain is named as such, not as a bad payload.
        let stranger = try TestPKI()
        #expect(reason(verifier, try stranger.sign(payload: noUUID)) == .untrustedChain)
    }

    @Test func aTestNotificationDecodes() throws {
        let pki = try TestPKI()
        let json = """
            {"notificationType":"TEST","notificationUUID":"9ad56bd2-0bc6-42e0-af24-fd996d87a1e6","version":"2.0",
             "signedDate":\(Self.signedDate),
             "data":{"appAppleId":1234567890,"bundleId":"com.example","environment":"Sandbox","bundleVersion":"1"}}
            """
        let payload = try pki.verifier().verify(try pki.sign(payload: json))
        #expect(payload.notificationType == .test)
        #expect(payload.subtype == nil)
        #expect(payload.externalPurchaseToken == nil)
        #expect(
            payload.data
                == NotificationData(
                    environmentName: "Sandbox",
                    bundleId: "com.example",
                    appAppleId: 1_234_567_890,
                    bundleVersion: "1"
                )
        )
        #expect(payload.environment == .sandbox)
    }

    @Test func theShippedAppleRootIsAppleRootCAG3() throws {
        let root = try X509Certificate(pem: AppleRootCertificates.appleRootCAG3PEM)
        #expect(
            root.sha256FingerprintText
                == "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79"
        )
        #expect(root.sha256FingerprintText == AppleRootCertificates.appleRootCAG3SHA256)
        #expect(root.subject == "C=US,O=Apple Inc.,OU=Apple Certification Authority,CN=Apple Root CA - G3")
        #expect(root.subject == root.issuer)
        #expect(try SignedPayloadVerifier().trustedRoots == [root])
    }

    @Test func aVerifierNeedsARoot() {
        #expect(throws: CryptoError.self) { try SignedPayloadVerifier(trustedRootPEMs: []) }
        #expect(throws: CryptoError.self) { try SignedPayloadVerifier(trustedRootPEMs: ["no pem here"]) }
    }

    @Test func failureCodesAreStable() {
        #expect(
            SignedPayloadError.Reason.allCases.map(\.rawValue) == [
                "malformedJWS", "unsupportedAlgorithm", "wrongCertificateCount", "badCertificate", "untrustedChain",
                "missingAppleOID", "expiredAtSignedDate", "badSignature", "malformedPayload",
            ]
        )
    }

    @Test func unknownTypesAndSubtypesKeepTheirText() throws {
        let json = """
            {"notificationType":"SOMETHING_NEW","subtype":"ODD","notificationUUID":"u","signedDate":1,
             "externalPurchaseToken":{"externalPurchaseId":"x","tokenCreationDate":1,"appAppleId":2,"bundleId":"b",
             "tokenType":"SERVICES","tokenExpirationDate":9}}
            """
        let payload = try JSONDecoder().decode(NotificationPayload.self, from: Data(json.utf8))
        #expect(payload.notificationType == .unknown("SOMETHING_NEW"))
        #expect(payload.subtype == .unknown("ODD"))
        #expect(payload.externalPurchaseToken?.tokenType == "SERVICES")
        #expect(payload.externalPurchaseToken?.tokenExpirationDate == 9)
        for subtype in ["UNREPORTED", "CREATED", "ACTIVE_TOKEN_REMINDER"] {
            #expect(NotificationSubtype(rawValue: subtype).rawValue == subtype)
            if case .unknown = NotificationSubtype(rawValue: subtype) { Issue.record("\(subtype) is a named case") }
        }
        let encoded = try JSONEncoder().encode(payload)
        #expect(try JSONDecoder().decode(NotificationPayload.self, from: encoded) == payload)
    }
}
