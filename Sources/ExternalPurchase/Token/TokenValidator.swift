public import Domain

/// Checks a decoded token against the link it came in and the apps this server is configured for.
///
/// The token is unsigned, so these are consistency checks, not proof. A token is never refused for being old:
/// Apple wants every token reported, so an expired custom-link token is still recorded; it only may not take
/// new purchases (`ExternalPurchaseToken.acceptsPurchases`).
public struct TokenValidator: Sendable {
    /// Configured `appAppleId` by bundle ID.
    public var apps: [BundleID: Int64]
    /// How far ahead of our clock a creation date may lie: five minutes. The date is stamped by Apple when it
    /// issues the token, not by the phone, so the only skew to allow for is between Apple's clock and ours, both
    /// kept by NTP to well under a second; minutes cover a server whose clock drifted. A wider window (it was a
    /// day) let a made-up token for a known id carry a date far ahead, and a token's `NO_LINE_ITEM` report waits
    /// for its creation date.
    public var allowedClockSkewMilliseconds: Int64 = 5 * 60_000

    /// The `tokenType` values accepted; a token without one (a link-out token from `ExternalPurchaseLink.open`)
    /// passes too.
    ///
    /// - `ACQUISITION`, `SERVICES`: the EU custom-link tokens, as their JSON carries them (Apple's token and
    ///   notification documentation).
    /// - `IN_APP`, `LINK_OUT`: the values `ExternalPurchaseCustomLink.token(for:)` documents as valid (Japan,
    ///   Brazil). What JSON value those tokens carry is not documented; the request value is the likeliest.
    /// - `WITHIN_APP`, `OUT_OF_APP`: the typed API of iOS 27.2 names the same two kinds `TokenType.withinApp` and
    ///   `.outOfApp`. Every enumerated value in Apple's external purchase JSON is the upper-case, underscored form
    ///   of its Swift name (`noLineItem` is `NO_LINE_ITEM`, `oneTimeBuy` is `ONE_TIME_BUY`), so if those tokens
    ///   carry new values rather than `IN_APP`/`LINK_OUT`, these are the spellings they would have. Lower camel
    ///   case is not accepted: Apple sends no value of its external purchase JSON in that form.
    ///
    /// Anything else is refused (`unknown_token_type`): the token is unsigned, and a made-up type on the first
    /// sighting of an id would otherwise stay until Apple's notification corrects it.
    public static let tokenTypes: Set<String> = [
        "ACQUISITION", "SERVICES", "IN_APP", "LINK_OUT", "WITHIN_APP", "OUT_OF_APP",
    ]

    public init(apps: [BundleID: Int64]) {
        self.apps = apps
    }

    /// The longest a custom-link token lives: Apple's production example spans 365 days (the sandbox's, an
    /// hour); the production figure is not documented, so a leap year and a month's margin are allowed. An
    /// expiry beyond it, or before the token's creation, is made up, and would hold the token unreported until
    /// then (Apple reports an active custom-link token only at its expiry).
    public static let longestLifetimeMilliseconds: Int64 = 400 * 86_400_000

    /// 2020-01-01T00:00:00Z: well before Apple's external purchase tokens (2024), so every real one passes.
    public static let earliestCreationDate: Int64 = 1_577_836_800_000

    /// nil when the token is acceptable. `queryBundleId` is the `bundleId` parameter StoreKit appends (absent for
    /// tokens the app forwards itself).
    public func validate(
        _ token: ExternalPurchaseToken,
        queryBundleId: BundleID?,
        nowMilliseconds: Int64
    ) -> TokenRejection? {
        if let queryBundleId, queryBundleId != token.bundleId { return TokenRejection(.bundleIdMismatch) }
        guard let appAppleId = apps[token.bundleId] else { return TokenRejection(.bundleIdNotConfigured) }
        guard appAppleId == token.appAppleId else { return TokenRejection(.appAppleIdMismatch) }
        if let type = token.tokenType, !Self.tokenTypes.contains(type) { return TokenRejection(.unknownTokenType) }
        if token.tokenCreationDate > nowMilliseconds + allowedClockSkewMilliseconds {
            return TokenRejection(.creationDateInFuture)
        }
        // The token is not signed: a date from before link-out tokens existed is made up, and would sit in the
        // ledger as "the oldest unreported token" for good (an extreme one overflowed the age arithmetic).
        if token.tokenCreationDate < Self.earliestCreationDate {
            return TokenRejection(.invalidField("tokenCreationDate"))
        }
        if let expiry = token.tokenExpirationDate,
            expiry < token.tokenCreationDate || expiry - token.tokenCreationDate > Self.longestLifetimeMilliseconds
        {
            return TokenRejection(.invalidField("tokenExpirationDate"))
        }
        return nil
    }
}
