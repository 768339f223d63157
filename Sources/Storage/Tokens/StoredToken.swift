public import Domain

/// A token as the ledger holds it: the fields it was recorded with (without the raw token) and what the ledger
/// learned since. The one read model for export, the admin API and reporting.
public struct StoredToken: Sendable, Equatable {
    public var externalPurchaseId: String
    public var appAppleId: Int64
    public var bundleId: String
    public var tokenType: String?
    /// Milliseconds since 1970, as Apple sends them.
    public var createdAt: Int64
    public var expiresAt: Int64?
    /// `production` or `sandbox`.
    public var environment: Environment
    /// `url` (StoreKit redirect) or `app` (forwarded by the app).
    public var source: TokenSource
    public var appAccountToken: String?
    public var firstSeenAt: Int64
    public var lastSeenAt: Int64
    public var visitCount: Int64
    public var checkoutId: String
}

/// The JSON form `linkout export` and the admin API print: Apple's names for the token's dates, and no customer
/// identifier (`appAccountToken`) or raw token. Its keys are an interface; never rename them.
extension StoredToken: Encodable {
    private enum CodingKeys: String, CodingKey {
        case externalPurchaseId, environment, source, bundleId, appAppleId, tokenType, tokenCreationDate
        case tokenExpirationDate, firstSeenAt, lastSeenAt, visitCount, checkoutId
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(externalPurchaseId, forKey: .externalPurchaseId)
        try container.encode(environment, forKey: .environment)
        try container.encode(source, forKey: .source)
        try container.encode(bundleId, forKey: .bundleId)
        try container.encode(appAppleId, forKey: .appAppleId)
        try container.encodeIfPresent(tokenType, forKey: .tokenType)
        try container.encode(createdAt, forKey: .tokenCreationDate)
        try container.encodeIfPresent(expiresAt, forKey: .tokenExpirationDate)
        try container.encode(firstSeenAt, forKey: .firstSeenAt)
        try container.encode(lastSeenAt, forKey: .lastSeenAt)
        try container.encode(visitCount, forKey: .visitCount)
        try container.encode(checkoutId, forKey: .checkoutId)
    }
}
