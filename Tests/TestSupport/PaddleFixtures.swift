import Foundation

/// Notification bodies shaped like Paddle's (Paddle: "How webhooks work", the API reference's entities, and the Python
/// SDK's notification fixtures): the envelope around a transaction, an adjustment or a subscription. Times are RFC 3339
/// with microseconds, as Paddle sends them; amounts are strings.
package enum PaddleFixtures {
    package struct Totals: Sendable {
        package var subtotal: Int64
        package var tax: Int64
        package var total: Int64

        package init(subtotal: Int64, tax: Int64, total: Int64) {
            self.subtotal = subtotal
            self.tax = tax
            self.total = total
        }
    }

    /// `transaction.completed` (or another `transaction.*` type).
    package static func transaction(
        type: String = "transaction.completed",
        eventId: String,
        occurredAt: String,
        transactionId: String,
        origin: String = "api",
        status: String = "completed",
        subscriptionId: String? = nil,
        currency: String = "USD",
        totals: Totals,
        customData: [String: String],
        billingPeriod: (startsAt: String, endsAt: String)? = nil
    ) -> String {
        let period = billingPeriod.map { #"{"starts_at":"\#($0.startsAt)","ends_at":"\#($0.endsAt)"}"# } ?? "null"
        let subscription = subscriptionId.map { "\"\($0)\"" } ?? "null"
        return """
            {"event_id":"\(eventId)","event_type":"\(type)","occurred_at":"\(occurredAt)",\
            "notification_id":"ntf_\(eventId.dropFirst(4))","data":{"id":"\(transactionId)","status":"\(status)",\
            "origin":"\(origin)","customer_id":"ctm_01fake","address_id":"add_01fake","subscription_id":\(subscription),\
            "currency_code":"\(currency)","custom_data":\(json(customData)),"billing_period":\(period),\
            "collection_mode":"automatic","details":{"totals":{"subtotal":"\(totals.subtotal)","discount":"0",\
            "tax":"\(totals.tax)","total":"\(totals.total)","credit":"0","credit_to_balance":"0","balance":"0",\
            "grand_total":"\(totals.total)","grand_total_tax":"\(totals.tax)","fee":null,"earnings":null,\
            "currency_code":"\(currency)"},"line_items":[{"id":"txnitm_\(transactionId.dropFirst(4))",\
            "price_id":"pri_01fake","quantity":1,"tax_rate":"0.2","totals":{"subtotal":"\(totals.subtotal)",\
            "tax":"\(totals.tax)","total":"\(totals.total)"}}]}}}
            """
    }

    /// `adjustment.created` / `adjustment.updated`.
    package static func adjustment(
        type: String = "adjustment.updated",
        eventId: String,
        occurredAt: String,
        adjustmentId: String,
        action: String = "refund",
        status: String = "approved",
        transactionId: String,
        subscriptionId: String? = nil,
        currency: String = "USD",
        total: Int64,
        tax: Int64
    ) -> String {
        let subscription = subscriptionId.map { "\"\($0)\"" } ?? "null"
        return """
            {"event_id":"\(eventId)","event_type":"\(type)","occurred_at":"\(occurredAt)",\
            "notification_id":"ntf_\(eventId.dropFirst(4))","data":{"id":"\(adjustmentId)","action":"\(action)",\
            "type":"partial","status":"\(status)","transaction_id":"\(transactionId)","subscription_id":\(subscription),\
            "customer_id":"ctm_01fake","currency_code":"\(currency)","reason":"customer request",\
            "items":[{"id":"adjitm_\(adjustmentId.dropFirst(4))","item_id":"txnitm_\(transactionId.dropFirst(4))",\
            "type":"partial","amount":"\(total)","totals":{"subtotal":"\(total - tax)","tax":"\(tax)","total":"\(total)"}}],\
            "totals":{"subtotal":"\(total - tax)","tax":"\(tax)","total":"\(total)","fee":"0","earnings":"0",\
            "currency_code":"\(currency)"}}}
            """
    }

    /// `subscription.canceled`.
    package static func subscriptionCanceled(
        eventId: String,
        occurredAt: String,
        subscriptionId: String,
        canceledAt: String,
        customData: [String: String]
    ) -> String {
        """
        {"event_id":"\(eventId)","event_type":"subscription.canceled","occurred_at":"\(occurredAt)",\
        "notification_id":"ntf_\(eventId.dropFirst(4))","data":{"id":"\(subscriptionId)","status":"canceled",\
        "canceled_at":"\(canceledAt)","custom_data":\(json(customData)),"current_billing_period":null,\
        "billing_cycle":{"interval":"month","frequency":1},"currency_code":"USD"}}
        """
    }

    static func json(_ object: [String: String]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
