/// What trying a redemption code came to.
public enum RedemptionOutcome: Sendable, Equatable {
    /// Redeemed now: the code is used up.
    case redeemed(RedemptionRecord)
    /// Used up before, at `at`, for the purchase `purchaseId`.
    case alreadyRedeemed(at: Int64, purchaseId: String)
    case expired(at: Int64)
    case notFound
}
