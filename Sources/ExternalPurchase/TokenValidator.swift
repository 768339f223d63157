/// Checks a decoded token against the link it came in and the apps this server is configured for.
///
/// The token is unsigned, so these are consistency checks, not proof. A token is never refused for being old:
/// Apple wants every token reported, so an expired custom-link token is still recorded; it only may not take
/// new purchases (`ExternalPurchaseToken.acceptsPurchases`).
public struct TokenValidator: Sendable {
    /// Configured `appAppleId` by bundle ID.
    public var apps: [String: Int64]
    /// How far in the future a creation date may lie (clock skew between Apple and us). Default one day.
    public var allowedClockSkewMilliseconds: Int64 = 86_400_000

    public init(apps: [String: Int64]) {
        self.apps = apps
    }

    /// 2020-01-01T00:00:00Z: well before Apple's external purchase tokens (2024), so every real one passes.
    public static let earliestCreationDate: Int64 = 1_577_836_800_000

    /// nil when the token is acceptable. `queryBundleId` is the `bundleId` parameter StoreKit appends (absent for
    /// tokens the app forwards itself).
    public func validate(
        _ token: ExternalPurchaseToken,
        queryBundleId: String?,
        nowMilliseconds: Int64
    ) -> TokenRejection? {
        if let queryBundleId, queryBundleId != token.bundleId { return TokenRejection(.bundleIdMismatch) }
        guard let appAppleId = apps[token.bundleId] else { return TokenRejection(.bundleIdNotConfigured) }
        guard appAppleId == token.appAppleId else { return TokenRejection(.appAppleIdMismatch) }
        if token.tokenCreationDate > nowMilliseconds + allowedClockSkewMilliseconds {
            return TokenRejection(.creationDateInFuture)
        }
        // The token is not signed: a date from before link-out tokens existed is made up, and would sit in the
        // ledger as "the oldest unreported token" for good (an extreme one overflowed the age arithmetic).
        if token.tokenCreationDate < Self.earliestCreationDate {
            return TokenRejection(.invalidField("tokenCreationDate"))
        }
        return nil
    }
}
