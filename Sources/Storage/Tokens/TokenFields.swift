public import Domain

/// A token as the ledger records it: Apple's token as decoded, and what arrived with it. What the ledger adds once
/// it has seen the token is `StoredToken`.
public struct TokenFields: Sendable, Equatable {
    /// Apple's fields; the token's `environment` follows from its id.
    public var token: ExternalPurchaseToken
    /// `url` (StoreKit redirect) or `app` (forwarded by the app with `POST /v1/tokens`).
    public var source: TokenSource
    public var appAccountToken: String?

    public init(_ token: ExternalPurchaseToken, source: TokenSource, appAccountToken: String? = nil) {
        self.token = token
        self.source = source
        self.appAccountToken = appAccountToken
    }
}
