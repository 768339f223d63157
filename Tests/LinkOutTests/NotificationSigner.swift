import Crypto
import ExternalPurchase
import Foundation
import Lifecycle
import TestSupport

/// The shared test chain (`TestSupport`) as the live notification tests use it: deliveries the server must
/// accept, and each part twisted to see it refused.
typealias NotificationSigner = TestCertificateChain

extension TestCertificateChain {
    static var validFrom: Int64 { start }
    static var validUntil: Int64 { end }

    init(intermediateMarker: String, leafMarker: String = SignedPayloadVerifier.leafOID) throws {
        try self.init(intermediateOIDs: [intermediateMarker], leafOIDs: [leafMarker])
    }

    init(leafMarker: String) throws {
        try self.init(leafOIDs: [leafMarker])
    }

    /// Writes the root as a PEM file (for `apple.notificationRootCertificates`).
    func writeRoot(to directory: URL) throws -> String {
        let file = directory.appendingPathComponent("root-\(UUID()).pem")
        try Data(root.pem.utf8).write(to: file)
        return file.path
    }

    /// A compact JWS over `payload` with `header`, signed by the leaf.
    func sign(_ payload: String, header: [String: Any]) throws -> String {
        try sign(payload: payload, header: header)
    }

    /// As Apple signs: `alg` ES256 and the three certificates.
    func sign(_ payload: String) throws -> String {
        try sign(payload: payload)
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
