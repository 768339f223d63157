import Domain
import Storage

/// Whether a purchase entitles the person now: the one rule the app's redemption and its later checks share,
/// driven by the same events as the webhooks (`purchase.refunded`, `purchase.reinstated`, `subscription.renewed`,
/// `subscription.ended`).
struct EntitlementPolicy: Sendable {
    enum State: Equatable {
        /// Entitled; a subscription until its paid period (and the grace) ends.
        case active(until: Int64?)
        /// Not entitled: `refunded` (a full refund or a lost chargeback), `subscription_ended` (cancelled), or
        /// `period_over` (a subscription whose renewal never came).
        case ended(reason: String)
    }

    /// `appEntitlements.renewalGraceSeconds` in milliseconds.
    let renewalGraceMilliseconds: Int64

    /// A partial refund (goodwill, a prorated credit) keeps the entitlement; a full one ends it.
    func state(of purchase: PurchaseRecord, at now: Int64) -> State {
        switch purchase.status {
        case .refunded: return .ended(reason: "refunded")
        case .ended: return .ended(reason: "subscription_ended")
        case .paid, .partiallyRefunded: break
        }
        guard purchase.kind == .subscription, let periodEnd = purchase.periodEnd else { return .active(until: nil) }
        let until = periodEnd + renewalGraceMilliseconds
        return now < until ? .active(until: until) : .ended(reason: "period_over")
    }
}
