public import Domain

/// A token's fields as the ledger records them (decoded by `ExternalPurchase`; kept as plain values here so
/// storage does not depend on the domain module). What the ledger adds once it has seen the token is
/// `StoredToken`.
public struct TokenFields: Sendable, Equatable {
    public var externalPurchaseId: String
    /// The token text as received, kept so the exact token can be reported or audited later. Never logged.
    public var rawToken: String
    public var appAppleId: Int64
    public var bundleId: String
    public var tokenType: String?
    /// Milliseconds since 1970, as Apple sends them.
    public var createdAt: Int64
    public var expiresAt: Int64?
    /// `production` or `sandbox`.
    public var environment: Environment
    /// `url` (StoreKit redirect) or `app` (forwarded by the app with `POST /v1/tokens`).
    public var source: TokenSource
    public var appAccountToken: String?

    public init(
        externalPurchaseId: String,
        rawToken: String,
        appAppleId: Int64,
        bundleId: String,
        tokenType: String?,
        createdAt: Int64,
        expiresAt: Int64?,
        environment: Environment,
        source: TokenSource,
        appAccountToken: String? = nil
    ) {
        self.externalPurchaseId = externalPurchaseId
        self.rawToken = rawToken
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.tokenType = tokenType
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.environment = environment
        self.source = source
        self.appAccountToken = appAccountToken
    }
}
