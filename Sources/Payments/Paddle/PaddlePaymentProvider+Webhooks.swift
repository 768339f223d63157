import Crypto
import Foundation

extension PaddlePaymentProvider {
    /// Sized like Stripe's route: a transaction notification with its items and prices is a few KB, and every
    /// byte is read before the signature can be checked, so an unsigned flood holds no more than this per
    /// connection.
    public static let webhookEndpoint = WebhookEndpoint(
        maxBodyBytes: 256 * 1024,
        signatureHeader: "Paddle-Signature",
        eventName: "a Paddle notification"
    )

    public var webhook: WebhookEndpoint? { Self.webhookEndpoint }

    /// The signature is checked over the raw body (`PaddleWebhookSignature`); then only the envelope is read
    /// (`event_id`, `event_type`, and `occurred_at` with the transaction or subscription it is about, by which the
    /// events of one transaction are acted on in the order they happened: Paddle does not deliver in order, Paddle:
    /// "How webhooks work"). A signed notification linkout cannot act on is stored and acknowledged, never refused, or
    /// Paddle would resend it for three days.
    public func verifyWebhook(body: [UInt8], header: (String) -> String?, now: Int64) throws(WebhookRefusal)
        -> WebhookEnvelope
    {
        do {
            try signature.verify(header: header("paddle-signature"), body: body, nowSeconds: now / 1000)
        } catch {
            throw .signature(error.description)
        }
        guard let envelope = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let id = envelope["event_id"] as? String, WebhookEnvelope.isKey(id),
            let type = envelope["event_type"] as? String, WebhookEnvelope.isKey(type)
        else { throw .notAnEvent("the body is not a Paddle notification") }
        return WebhookEnvelope(
            eventId: id,
            type: type,
            occurredAt: (envelope["occurred_at"] as? String).flatMap(PaddleTimestamp.milliseconds),
            orderKey: Self.orderKey(type: type, data: envelope["data"] as? [String: Any])
        )
    }

    /// A transaction's notifications and its adjustments' (refunds, chargebacks) share the transaction's id; a
    /// subscription's share its own.
    static func orderKey(type: String, data: [String: Any]?) -> String? {
        let key: String?
        if type.hasPrefix("adjustment.") {
            key = data?["transaction_id"] as? String
        } else if type.hasPrefix("transaction.") || type.hasPrefix("subscription.") {
            key = data?["id"] as? String
        } else {
            key = nil
        }
        guard let key, WebhookEnvelope.isKey(key) else { return nil }
        return key
    }

    /// A stored notification. Paddle's notifications do not say live or test: the key does (`mode`).
    public func decodeEvent(_ body: [UInt8]) throws -> ProviderEvent {
        ProviderEvent(payload: try PaddleNotification.decode(body).paymentEvent, isLive: true)
    }

    /// Adds the customer's country to a payment: notifications carry only the address id, so the transaction is read
    /// with its address (`GET /transactions/{id}?include=address`, Paddle API reference: Get a transaction). In the
    /// background processor only; a failure leaves the event to be tried again.
    public func resolve(_ event: ProviderEvent) throws(PaymentError) -> ProviderEvent {
        var event = event
        do throws(PaddleAPIError) {
            switch event.payload {
            case .purchaseCompleted(var completion) where completion.customerCountry == nil:
                completion.customerCountry = try api.transaction(completion.sessionId).countryCode
                event.payload = .purchaseCompleted(completion)
            case .renewalPaid(var payment) where payment.customerCountry == nil:
                payment.customerCountry = try api.transaction(payment.invoiceId).countryCode
                event.payload = .renewalPaid(payment)
            case .subscriptionChanged(var payment) where payment.customerCountry == nil:
                payment.customerCountry = try api.transaction(payment.invoiceId).countryCode
                event.payload = .subscriptionChanged(payment)
            default:
                break
            }
        } catch {
            throw Self.paymentError(error)
        }
        return event
    }
}
