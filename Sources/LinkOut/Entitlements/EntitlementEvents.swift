import Domain
import Foundation
import Lifecycle
import Storage

/// The entitlement side of a purchase: its redemption code (stored as a hash) and the events for the developer's
/// backend (`purchase.completed`, `subscription.renewed`, `purchase.refunded`, `purchase.reinstated`,
/// `subscription.ended`). Event ids
/// are derived from what caused them, so acting on a payment event twice makes the same event, stored once.
struct EntitlementEvents: Sendable {
    let identifiers: Identifiers
    let ledger: Ledger
    let webhooksEnabled: Bool
    let codeLifetimeMilliseconds: Int64

    enum Kind: String, Sendable {
        case purchaseCompleted = "purchase.completed"
        case subscriptionRenewed = "subscription.renewed"
        case purchaseRefunded = "purchase.refunded"
        /// A chargeback was reversed: the money is the seller's again (the backend heard `purchase.refunded`).
        case purchaseReinstated = "purchase.reinstated"
        case subscriptionEnded = "subscription.ended"
    }

    /// The body a receiver gets: the event and the purchase as it stands after it.
    struct Body: Encodable {
        struct Purchase: Encodable {
            var purchaseId: String
            var provider: ProviderID
            var externalPurchaseId: ExternalPurchaseID?
            var bundleId: BundleID?
            var productId: ProductID?
            var kind: PurchaseKind
            var status: String
            var appAccountToken: String?
            var currency: CurrencyCode
            var amountTotal: Int64
            var periodEnd: Int64?
            /// No money changed hands (the demo provider, a provider's test mode).
            var test: Bool
        }
        var id: String
        var type: String
        /// UNIX seconds.
        var created: Int64
        /// What caused the event (a line item id, a refund's cumulative amount).
        var cause: String
        var purchase: Purchase
    }

    func redemption(for purchase: PurchaseRecord, at now: Int64) -> RedemptionRecord {
        RedemptionRecord(
            codeHash: identifiers.redemptionCodeHash(identifiers.redemptionCode(purchaseId: purchase.purchaseId)),
            purchaseId: purchase.purchaseId,
            createdAt: now,
            expiresAt: now + codeLifetimeMilliseconds
        )
    }

    /// The event for `purchase` (as it stands after the change), caused by `cause`; none when no receiver is
    /// configured.
    func event(_ kind: Kind, purchase: PurchaseRecord, cause: String, at now: Int64) throws -> [WebhookDelivery] {
        guard webhooksEnabled else { return [] }
        let id = identifiers.eventId([kind.rawValue, purchase.purchaseId, cause])
        // An account erased (`linkout erase --account-token`) stays erased in what is made after, as in what was
        // waiting for delivery then.
        let appAccountToken = try ErasedAccount.shown(
            purchase.externalPurchaseId.flatMap { try ledger.tokens.token($0)?.appAccountToken },
            ledger: ledger,
            identifiers: identifiers
        )
        let body = Body(
            id: id,
            type: kind.rawValue,
            created: now / 1000,
            cause: cause,
            purchase: Body.Purchase(
                purchaseId: purchase.purchaseId,
                provider: ProviderID(purchase.provider.rawValue),
                externalPurchaseId: purchase.externalPurchaseId,
                bundleId: purchase.bundleId,
                productId: purchase.productId,
                kind: purchase.kind,
                status: purchase.status.rawValue,
                appAccountToken: appAccountToken,
                currency: purchase.currency,
                amountTotal: purchase.amountTotal,
                periodEnd: purchase.periodEnd,
                test: !purchase.live
            )
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return [
            WebhookDelivery(
                eventId: id,
                purchaseId: purchase.purchaseId,
                type: kind.rawValue,
                body: String(decoding: try encoder.encode(body), as: UTF8.self),
                nextAttemptAt: now,
                createdAt: now
            )
        ]
    }
}
