public import Domain
import Foundation

/// Makes StoreKit-shaped tokens and redirect URLs for testing without a device (`linkout simulate`).
public enum TokenMinter {
    /// A fresh token; sandbox ids carry Apple's `SANDBOX_` prefix, custom-link types get an expiry
    /// (sandbox: one hour, as Apple documents; production: a year, as in Apple's example).
    public static func mint(
        bundleId: BundleID,
        appAppleId: Int64,
        sandbox: Bool,
        tokenType: String?,
        nowMilliseconds: Int64
    ) -> ExternalPurchaseToken {
        let id = (sandbox ? "SANDBOX_" : "") + UUID().uuidString.lowercased()
        var token = ExternalPurchaseToken(
            appAppleId: appAppleId,
            bundleId: bundleId,
            tokenCreationDate: nowMilliseconds,
            externalPurchaseId: ExternalPurchaseID(id)
        )
        if let tokenType {
            token.tokenType = tokenType
            token.tokenExpirationDate = nowMilliseconds + (sandbox ? Milliseconds.hour : Milliseconds.days(365))
        }
        return token
    }

    /// The token's text: Base64URL of its JSON, unpadded.
    public static func encode(_ token: ExternalPurchaseToken) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = (try? encoder.encode(token)) ?? Data()
        return Base64URL.encode(json)
    }

    /// The URL StoreKit would open: the destination with `externalPurchaseToken` and `bundleId` appended
    /// (Apple: destination URLs carry no query, so StoreKit appends with `?`).
    public static func redirectURL(base: String, token: ExternalPurchaseToken) -> String {
        base + "?externalPurchaseToken=" + encode(token) + "&bundleId=" + token.bundleId.rawValue
    }
}
