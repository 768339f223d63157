/// A token's fields as the ledger stores them (decoded by `ExternalPurchase`; kept as plain values here so
/// storage does not depend on the domain module).
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
    public var environment: String
    /// `url` (StoreKit redirect) or `app` (forwarded by the app with `POST /v1/tokens`).
    public var source: String
    public var appAccountToken: String?

    public init(
        externalPurchaseId: String,
        rawToken: String,
        appAppleId: Int64,
        bundleId: String,
        tokenType: String?,
        createdAt: Int64,
        expiresAt: Int64?,
        environment: String,
        source: String,
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

/// One landing visit to record.
public struct Visit: Sendable {
    /// The token it carried, if any (US link-outs and plain visits carry none).
    public var token: TokenFields?
    public var checkoutId: String
    public var bundleId: String
    public var landingPath: String
    /// `utm_source`, `utm_medium`, `utm_campaign`, `utm_term`, `utm_content` when present.
    public var utm: [String: String]
    /// Milliseconds since 1970.
    public var at: Int64

    public init(
        token: TokenFields?,
        checkoutId: String,
        bundleId: String,
        landingPath: String,
        utm: [String: String],
        at: Int64
    ) {
        self.token = token
        self.checkoutId = checkoutId
        self.bundleId = bundleId
        self.landingPath = landingPath
        self.utm = utm
        self.at = at
    }
}

/// What recording a token or visit found.
public struct RecordOutcome: Sendable, Equatable {
    public var checkoutId: String
    /// The token's visit count after this visit (0 for tokenless visits and app-forwarded tokens).
    public var visitCount: Int64
    /// Whether this was the first time the token was seen.
    public var isNewToken: Bool

    public init(checkoutId: String, visitCount: Int64, isNewToken: Bool) {
        self.checkoutId = checkoutId
        self.visitCount = visitCount
        self.isNewToken = isNewToken
    }
}

/// A checkout as the checkout page needs it.
public struct CheckoutRecord: Sendable, Equatable {
    public var id: String
    public var bundleId: String
    public var externalPurchaseId: String?
    public var environment: String?
    public var tokenExpiresAt: Int64?
}

/// One row of the token ledger, as `linkout export` and the admin API show it (no raw token).
public struct TokenRow: Sendable, Equatable, Codable {
    public var externalPurchaseId: String
    public var environment: String
    public var source: String
    public var bundleId: String
    public var appAppleId: Int64
    public var tokenType: String?
    public var tokenCreationDate: Int64
    public var tokenExpirationDate: Int64?
    public var firstSeenAt: Int64
    public var lastSeenAt: Int64
    public var visitCount: Int64
    public var checkoutId: String?
}
