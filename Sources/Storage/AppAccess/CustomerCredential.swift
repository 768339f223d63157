public import Domain

/// What an app holds to check its entitlements later without a backend of its own: a random secret of which
/// the ledger keeps only a keyed hash, covering the purchases redeemed with it.
public struct CustomerCredential: Sendable, Equatable, Codable {
    /// Public id, for the operator (revoke, reissue) and the logs; it grants nothing.
    public var id: String
    public var bundleId: BundleID
    /// The app's account for the person, when the app sent one at redemption.
    public var appAccountToken: String?
    public var createdAt: Int64
    public var revokedAt: Int64?
    /// The credential issued in its place, when the operator reissued it.
    public var replacedBy: String?
    /// The purchases it covers, in the order they were added.
    public var purchaseIds: [String]

    public init(
        id: String,
        bundleId: BundleID,
        appAccountToken: String?,
        createdAt: Int64,
        revokedAt: Int64? = nil,
        replacedBy: String? = nil,
        purchaseIds: [String] = []
    ) {
        self.id = id
        self.bundleId = bundleId
        self.appAccountToken = appAccountToken
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.replacedBy = replacedBy
        self.purchaseIds = purchaseIds
    }
}
