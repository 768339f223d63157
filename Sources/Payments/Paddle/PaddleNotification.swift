/// A Paddle notification (Paddle: "How webhooks work"), decoded from the raw body after `PaddleWebhookSignature`
/// accepted it: the envelope (`event_id` to deduplicate on, `event_type`, `occurred_at`) and the entity linkout acts
/// on. What it means for linkout, as a provider-neutral `PaymentEvent`, is worked out in
/// `PaddleNotification+PaymentEvent.swift`.
public struct PaddleNotification: Sendable, Equatable {
    /// `evt_…`. Paddle delivers at least once and in any order: store by this id before acting.
    public var eventId: String
    public var eventType: String
    /// UNIX ms. Events of one transaction are acted on in this order.
    public var occurredAt: Int64
    /// `ntf_…`: this delivery's notification (one event may reach several destinations).
    public var notificationId: String?
    public var entity: Entity

    public enum Entity: Sendable, Equatable {
        /// `transaction.completed`, `transaction.payment_failed`, `transaction.canceled`.
        case transaction(PaddleTransaction)
        /// `adjustment.created` and `adjustment.updated`: refunds, credits, chargebacks and their reversals.
        case adjustment(PaddleAdjustment)
        /// `subscription.canceled`.
        case subscriptionCanceled(PaddleSubscriptionEnd)
        /// Every other event type: acknowledged, not acted on.
        case other
    }

    public init(eventId: String, eventType: String, occurredAt: Int64, notificationId: String?, entity: Entity) {
        self.eventId = eventId
        self.eventType = eventType
        self.occurredAt = occurredAt
        self.notificationId = notificationId
        self.entity = entity
    }

    /// The event types acted on. Paddle sends only those a notification destination subscribes to (README).
    public static let transactionTypes: Set<String> = [
        "transaction.completed", "transaction.payment_failed", "transaction.canceled",
    ]

    /// Decodes a notification body. Other event types decode to `.other`; a known type with missing or
    /// mistyped fields throws, naming the field.
    public static func decode(_ body: [UInt8]) throws(ProviderJSONError) -> PaddleNotification {
        let event = try ProviderJSON.parse(body)
        let type = try event.string("event_type")
        let data = { () throws(ProviderJSONError) -> ProviderJSON in try event.child("data") }
        let entity: Entity
        switch type {
        case _ where transactionTypes.contains(type): entity = .transaction(try PaddleTransaction(try data()))
        case "adjustment.created", "adjustment.updated": entity = .adjustment(try PaddleAdjustment(try data()))
        case "subscription.canceled":
            let subscription = try data()
            entity = .subscriptionCanceled(
                PaddleSubscriptionEnd(
                    subscriptionId: try subscription.id("id"),
                    canceledAt: try subscription.optionalPaddleTime("canceled_at"),
                    customData: try PaddleCustomData(subscription.optionalChild("custom_data"))
                )
            )
        default: entity = .other
        }
        return PaddleNotification(
            eventId: try event.string("event_id"),
            eventType: type,
            occurredAt: try event.paddleTime("occurred_at"),
            notificationId: try event.optionalString("notification_id"),
            entity: entity
        )
    }
}

/// What linkout put in a transaction's `custom_data` when it created it (`PaddleAPI.transactionBody`). Paddle copies it
/// from the transaction to the subscription and every later transaction of it (Paddle: "Work with custom data"), so
/// renewals and plan changes carry it too.
public struct PaddleCustomData: Sendable, Equatable {
    public var checkoutId: String?
    public var intentId: String?
    public var externalPurchaseId: String?
    public var bundleId: String?
    public var productId: String?

    public init(
        checkoutId: String? = nil,
        intentId: String? = nil,
        externalPurchaseId: String? = nil,
        bundleId: String? = nil,
        productId: String? = nil
    ) {
        self.checkoutId = checkoutId
        self.intentId = intentId
        self.externalPurchaseId = externalPurchaseId
        self.bundleId = bundleId
        self.productId = productId
    }

    /// Reads linkout's keys; other keys (a seller's own, or none: `null`) are left alone. A value that is not a
    /// string is taken as absent: custom data is the seller's to edit in Paddle's dashboard.
    init(_ object: ProviderJSON?) throws(ProviderJSONError) {
        func text(_ key: String) -> String? { object?.object[key] as? String }
        self.init(
            checkoutId: text("linkout_checkout_id"),
            intentId: text("linkout_intent_id"),
            externalPurchaseId: text("external_purchase_id"),
            bundleId: text("bundle_id"),
            productId: text("product_id")
        )
    }
}

/// `subscription.canceled`: the subscription is over, no more renewals.
public struct PaddleSubscriptionEnd: Sendable, Equatable {
    public var subscriptionId: String
    /// `canceled_at`, UNIX ms.
    public var canceledAt: Int64?
    public var customData: PaddleCustomData
}
