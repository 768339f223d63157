/// What trying a redemption code came to.
public enum RedemptionOutcome: Sendable, Equatable {
    /// Redeemed now: the code is used up.
    case redeemed(RedemptionRecord)
    case alreadyRedeemed(at: Int64)
    case expired(at: Int64)
    case notFound
}
