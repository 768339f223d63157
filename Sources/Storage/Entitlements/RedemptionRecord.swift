/// The single-use code that brings a purchase into the app. Only a keyed hash of the code is stored, so the
/// ledger alone cannot be used to redeem anything.
public struct RedemptionRecord: Sendable, Equatable, Codable {
    public var codeHash: String
    public var purchaseId: String
    public var createdAt: Int64
    public var expiresAt: Int64
    public var redeemedAt: Int64?

    public init(codeHash: String, purchaseId: String, createdAt: Int64, expiresAt: Int64, redeemedAt: Int64? = nil) {
        self.codeHash = codeHash
        self.purchaseId = purchaseId
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.redeemedAt = redeemedAt
    }
}
