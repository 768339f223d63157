public import Domain

/// A token as the ledger holds it: Apple's token and what arrived with it (without the raw token), and what the
/// ledger learned since. The one read model for export, the admin API and reporting.
public struct StoredToken: Sendable, Equatable {
    /// Apple's fields; the token's `environment` follows from its id.
    public var token: ExternalPurchaseToken
    /// `url` (StoreKit redirect) or `app` (forwarded by the app).
    public var source: TokenSource
    public var appAccountToken: String?
    public var firstSeenAt: Int64
    public var lastSeenAt: Int64
    public var visitCount: Int64
    public var checkoutId: CheckoutID
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
        try container.encode(token.externalPurchaseId, forKey: .externalPurchaseId)
        try container.encode(token.environment, forKey: .environment)
        try container.encode(source, forKey: .source)
        try container.encode(token.bundleId, forKey: .bundleId)
        try container.encode(token.appAppleId, forKey: .appAppleId)
        try container.encodeIfPresent(token.tokenType, forKey: .tokenType)
        try container.encode(token.tokenCreationDate, forKey: .tokenCreationDate)
        try container.encodeIfPresent(token.tokenExpirationDate, forKey: .tokenExpirationDate)
        try container.encode(firstSeenAt, forKey: .firstSeenAt)
        try container.encode(lastSeenAt, forKey: .lastSeenAt)
        try container.encode(visitCount, forKey: .visitCount)
        try container.encode(checkoutId, forKey: .checkoutId)
    }
}
