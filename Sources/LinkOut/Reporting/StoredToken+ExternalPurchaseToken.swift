import ExternalPurchase
import Storage

extension StoredToken {
    /// The token as the domain model sees it (for validating line items against its active period).
    var externalPurchaseToken: ExternalPurchaseToken {
        ExternalPurchaseToken(
            appAppleId: appAppleId,
            bundleId: bundleId,
            tokenCreationDate: createdAt,
            externalPurchaseId: externalPurchaseId,
            tokenType: tokenType,
            tokenExpirationDate: expiresAt
        )
    }
}
