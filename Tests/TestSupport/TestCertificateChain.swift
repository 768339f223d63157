package import Crypto
import ExternalPurchase
import Foundation

/// A certificate chain shaped like the one Apple signs App Store Server Notifications with (root → intermediate
/// with the WWDR marker OID → leaf with the receipt-signer marker OID, P-256 throughout), minted per test, and
/// JWS signing with its leaf. Tests twist one part (an OID, a validity, the root) to see it refused.
package struct TestCertificateChain {
    /// 2020-01-01, 2025-01-01 and 2040-01-01 in UNIX seconds.
    package static let start: Int64 = 1_577_836_800
    package static let middle: Int64 = 1_735_689_600
    package static let end: Int64 = 2_208_988_800

    package var rootKey: ES256Key
    package var root: X509Certificate
    package var intermediateKey: ES256Key
    package var intermediate: X509Certificate
    package var leafKey: ES256Key
    package var leaf: X509Certificate

    package init(
        rootName: String = "Test Root CA",
        intermediateOIDs: [String] = [SignedPayloadVerifier.intermediateOID],
        leafOIDs: [String] = [SignedPayloadVerifier.leafOID],
        leafValidity: ClosedRange<Int64> = TestCertificateChain.start...TestCertificateChain.end
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
            commonName: "Test Intermediate CA",
            serialNumber: 2,
            notBefore: Self.start,
            notAfter: Self.end,
            isCertificateAuthority: true,
            markerOIDs: intermediateOIDs
        ).sign(subjectKey: intermediateKey, issuer: root, issuerKey: rootKey)
        leafKey = try ES256Key.generate()
        leaf = try X509Certificate.Builder(
            commonName: "Test Leaf",
            serialNumber: 3,
            notBefore: leafValidity.lowerBound,
            notAfter: leafValidity.upperBound,
            isCertificateAuthority: false,
            markerOIDs: leafOIDs
        ).sign(subjectKey: leafKey, issuer: intermediate, issuerKey: intermediateKey)
    }

    /// Leaf first, as Apple sends them.
    package var chain: [X509Certificate] { [leaf, intermediate, root] }

    /// `x5c` as Apple sends it: standard Base64 DER, leaf first.
    package var x5c: [String] { Self.x5c(chain) }

    package static func x5c(_ certificates: [X509Certificate]) -> [String] {
        certificates.map { Data($0.der).base64EncodedString() }
    }

    /// A compact JWS over `payload` with any header, signed by the leaf (ES256, JOSE r‖s).
    package func sign(payload: String, header: [String: Any]) throws -> String {
        let headerJSON = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        let signingInput = Base64URL.encode(headerJSON) + "." + Base64URL.encode(Array(payload.utf8))
        return signingInput + "." + Base64URL.encode(try leafKey.sign(Array(signingInput.utf8)))
    }

    /// A JWS as Apple makes it: `alg` ES256 and `x5c` (or the given certificates).
    package func sign(payload: String, x5c: [String]? = nil) throws -> String {
        try sign(payload: payload, header: ["alg": "ES256", "x5c": x5c ?? self.x5c])
    }
}
