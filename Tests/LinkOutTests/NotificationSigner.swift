import Crypto
import ExternalPurchase
import Foundation
import Lifecycle

/// Mints a chain shaped like Apple's notification chain (root → intermediate with the WWDR marker → leaf with
/// the receipt-signer marker, P-256) and signs App Store Server Notification payloads with it, so live tests
/// can deliver notifications the server must accept, and twist each part to see it refused.
struct NotificationSigner {
    /// 2020-01-01 and 2040-01-01, UNIX seconds.
    static let validFrom: Int64 = 1_577_836_800
    static let validUntil: Int64 = 2_208_988_800

    let rootKey: ES256Key
    let root: X509Certificate
    let intermediateKey: ES256Key
    let intermediate: X509Certificate
    let leafKey: ES256Key
    let leaf: X509Certificate

    init(
        intermediateMarker: String = SignedPayloadVerifier.intermediateOID,
        leafMarker: String = SignedPayloadVerifier.leafOID,
        leafValidity: ClosedRange<Int64> = NotificationSigner.validFrom...NotificationSigner.validUntil
    ) throws {
        rootKey = try ES256Key.generate()
        root = try X509Certificate.Builder(
            commonName: "LinkOut Test Root",
            notBefore: Self.validFrom,
            notAfter: Self.validUntil,
            isCertificateAuthority: true
        ).sign(subjectKey: rootKey, issuerKey: rootKey)
        intermediateKey = try ES256Key.generate()
        intermediate = try X509Certificate.Builder(
            commonName: "LinkOut Test Intermediate",
            serialNumber: 2,
            notBefore: Self.validFrom,
            notAfter: Self.validUntil,
            isCertificateAuthority: true,
            markerOIDs: [intermediateMarker]
        ).sign(subjectKey: intermediateKey, issuer: root, issuerKey: rootKey)
        leafKey = try ES256Key.generate()
        leaf = try X509Certificate.Builder(
            commonName: "LinkOut Test Leaf",
            serialNumber: 3,
            notBefore: leafValidity.lowerBound,
            notAfter: leafValidity.upperBound,
            isCertificateAuthority: false,
            markerOIDs: [leafMarker]
        ).sign(subjectKey: leafKey, issuer: intermediate, issuerKey: intermediateKey)
    }

    /// A signer whose chain ends in the same root (for trust) but whose leaf or intermediate differs.
    var chain: [X509Certificate] { [leaf, intermediate, root] }

    /// Standard Base64 DER, leaf first, as Apple sends `x5c`.
    static func x5c(_ certificates: [X509Certificate]) -> [String] {
        certificates.map { Data($0.der).base64EncodedString() }
    }

    /// Writes the root as a PEM file (for `apple.notificationRootCertificates`).
    func writeRoot(to directory: URL) throws -> String {
        let file = directory.appendingPathComponent("root-\(UUID()).pem")
        try Data(root.pem.utf8).write(to: file)
        return file.path
    }

    /// A compact JWS over `payload` with `header`, signed by the leaf (ES256, JOSE r‖s).
    func sign(_ payload: String, header: [String: Any]) throws -> String {
        let headerJSON = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        let input = Base64URL.encode(headerJSON) + "." + Base64URL.encode(Array(payload.utf8))
        return input + "." + Base64URL.encode(try leafKey.sign(Array(input.utf8)))
    }

    /// As Apple signs: `alg` ES256 and the three certificates.
    func sign(_ payload: String) throws -> String {
        try sign(payload, header: ["alg": "ES256", "x5c": Self.x5c(chain)])
    }

    /// An `EXTERNAL_PURCHASE_TOKEN` notification for the example app (`com.example`, 1234567890).
    static func tokenPayload(
        subtype: String,
        externalPurchaseId: String,
        uuid: String = UUID().uuidString.lowercased(),
        signedDate: Int64 = Clock.system.nowMilliseconds(),
        tokenCreationDate: Int64 = Clock.system.nowMilliseconds() - 11 * 86_400_000,
        bundleId: String = "com.example",
        appAppleId: Int64 = 1_234_567_890,
        tokenType: String? = nil,
        tokenExpirationDate: Int64? = nil
    ) -> String {
        var token: [String: Any] = [
            "externalPurchaseId": externalPurchaseId, "tokenCreationDate": tokenCreationDate,
            "appAppleId": appAppleId, "bundleId": bundleId,
        ]
        if let tokenType { token["tokenType"] = tokenType }
        if let tokenExpirationDate { token["tokenExpirationDate"] = tokenExpirationDate }
        let payload: [String: Any] = [
            "notificationType": "EXTERNAL_PURCHASE_TOKEN", "subtype": subtype, "notificationUUID": uuid,
            "version": "2.0", "signedDate": signedDate, "externalPurchaseToken": token,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The POST body Apple sends.
    static func body(_ signedPayload: String) -> String {
        #"{"signedPayload":"\#(signedPayload)"}"#
    }
}
