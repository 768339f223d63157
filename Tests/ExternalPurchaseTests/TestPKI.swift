import Crypto
import ExternalPurchase
import Foundation
import TestSupport

/// The shared test chain (`TestSupport`), with what the verifier tests add: a verifier trusting its root and
/// Apple's example payload.
typealias TestPKI = TestCertificateChain

extension TestCertificateChain {
    /// A verifier that trusts this chain's root only.
    func verifier() throws -> SignedPayloadVerifier {
        try SignedPayloadVerifier(trustedRootPEMs: [root.pem])
    }

    /// Apple's example `EXTERNAL_PURCHASE_TOKEN`/`UNREPORTED` payload (from the test resources of Apple's App Store
    /// Server Library for Swift), signed at `signedDate` (ms).
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
