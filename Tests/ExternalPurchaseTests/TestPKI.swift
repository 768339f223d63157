import Crypto
import ExternalPurchase
import Foundation

/// A certificate chain shaped like the one Apple signs notifications with (root → WWDR-like intermediate →
/// receipt-signer leaf, P-256 throughout), minted per test, and a signer that makes App Store Server
/// Notification JWSs with it.
struct TestPKI {
    /// 2020-01-01, 2025-01-01 and 2040-01-01 in UNIX seconds.
    static let start: Int64 = 1_577_836_800
    static let middle: Int64 = 1_735_689_600
    static let end: Int64 = 2_208_988_800

    var rootKey: ES256Key
    var root: X509Certificate
    var intermediateKey: ES256Key
    var intermediate: X509Certificate
    var leafKey: ES256Key
    var leaf: X509Certificate

    init(
        rootName: String = "Test Root CA - G3",
        intermediateOIDs: [String] = [SignedPayloadVerifier.intermediateOID],
        leafOIDs: [String] = [SignedPayloadVerifier.leafOID],
        leafValidity: ClosedRange<Int64> = TestPKI.start...TestPKI.end
    ) throws {
        rootKey = try ES256Key.generate()
        root = try X509Certificate.Builder(
            commonName: rootName,
            organization: "Test PKI",
            notBefore: Self.start,
            notAfter: Self.end,
            isCertificateAuthority: true
        ).sign(subjectKey: rootKey, issuerKey: rootKey)
        intermediateKey = try ES256Key.generate()
        intermediate = try X509Certificate.Builder(
            commonName: "Test Worldwide Developer Relations CA",
            serialNumber: 2,
            notBefore: Self.start,
            notAfter: Self.end,
            isCertificateAuthority: true,
            markerOIDs: intermediateOIDs
        ).sign(subjectKey: intermediateKey, issuer: root, issuerKey: rootKey)
        leafKey = try ES256Key.generate()
        leaf = try X509Certificate.Builder(
            commonName: "Test Receipt Signing",
            serialNumber: 3,
            notBefore: leafValidity.lowerBound,
            notAfter: leafValidity.upperBound,
            isCertificateAuthority: false,
            markerOIDs: leafOIDs
        ).sign(subjectKey: leafKey, issuer: intermediate, issuerKey: intermediateKey)
    }

    /// A verifier that trusts this chain's root only.
    func verifier() throws -> SignedPayloadVerifier {
        try SignedPayloadVerifier(trustedRootPEMs: [root.pem])
    }

    /// `x5c` as Apple sends it: standard Base64 DER, leaf first.
    var x5c: [String] { [leaf, intermediate, root].map { Data($0.der).base64EncodedString() } }

    /// A JWS over `payload` with any header, signed by the leaf.
    func sign(payload: String, header: [String: Any]) throws -> String {
        let headerJSON = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        let signingInput = Base64URL.encode(headerJSON) + "." + Base64URL.encode(Array(payload.utf8))
        return signingInput + "." + Base64URL.encode(try leafKey.sign(Array(signingInput.utf8)))
    }

    /// A JWS as Apple makes it: `alg` ES256 and `x5c` (or the given certificates).
    func sign(payload: String, x5c: [String]? = nil) throws -> String {
        try sign(payload: payload, header: ["alg": "ES256", "x5c": x5c ?? self.x5c])
    }

    /// Apple's example `EXTERNAL_PURCHASE_TOKEN`/`UNREPORTED` payload (spec §6.2), signed at `signedDate` (ms).
    static func unreportedPayload(
        signedDate: Int64,
        externalPurchaseId: String = "b2158121-7af9-49d4-9561-1f588205523e"
    )
        -> String
    {
        """
        {
          "notificationType": "EXTERNAL_PURCHASE_TOKEN",
          "subtype": "UNREPORTED",
          "notificationUUID": "002e14d5-51f5-4503-b5a8-c3a1af68eb20",
          "version": "2.0",
          "signedDate": \(signedDate),
          "externalPurchaseToken": {
            "externalPurchaseId": "\(externalPurchaseId)",
            "tokenCreationDate": 1698148950000,
            "appAppleId": 55555,
            "bundleId": "com.example"
          }
        }
        """
    }
}
