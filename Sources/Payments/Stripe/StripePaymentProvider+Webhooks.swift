import Crypto
import Foundation

extension StripePaymentProvider {
    /// Stripe's events are small; anything far larger is not one.
    public static let webhookEndpoint = WebhookEndpoint(
        maxBodyBytes: 256 * 1024,
        signatureHeader: "Stripe-Signature",
        eventName: "a Stripe event"
    )

    public var webhook: WebhookEndpoint? { Self.webhookEndpoint }

    /// The oldest event Stripe sends: it resends events of the last 30 days from the dashboard (Stripe: "Resend
    /// events"), a few days more for slack.
    static let oldestResentEventMilliseconds: Int64 = 35 * 86_400_000

    /// The signature is checked over the raw body (HMAC-SHA256 of `t.body` with the endpoint's secret; Stripe: "Check
    /// the webhook signatures"). Only the envelope is read: a signed event whose contents linkout cannot act on is
    /// still stored and acknowledged (and shows as unreadable), never refused, or Stripe would resend it for days and
    /// then drop it. Unknown types are stored and acknowledged too.
    public func verifyWebhook(body: [UInt8], header: (String) -> String?, now: Int64) throws(WebhookRefusal)
        -> WebhookEnvelope
    {
        do {
            try signature.verify(header: header("stripe-signature"), body: body, nowSeconds: now / 1000)
        } catch {
            throw .signature(error.description)
        }
        guard let envelope = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let id = envelope["id"] as? String, WebhookEnvelope.isKey(id),
            let type = envelope["type"] as? String, WebhookEnvelope.isKey(type)
        else { throw .notAnEvent("the body is not a Stripe event") }
        // When it happened (`created`, UNIX seconds): the monthly close dates an event still waiting by it, not by
        // when it arrived (a refund of October delivered or retried in November is October's). One dated before
        // Stripe could have sent it (resent from the dashboard within its 30 days, retried for 3) or after now is
        // dated by its arrival instead. Stripe keeps no order between events, so nothing orders by it (no `orderKey`).
        // Compared in seconds: any number fits, and none overflows on its way to milliseconds.
        let nowSeconds = now / 1000
        let plausible = (nowSeconds - Self.oldestResentEventMilliseconds / 1000)...(nowSeconds + 60)
        let created = (envelope["created"] as? Int).map(Int64.init).flatMap { plausible.contains($0) ? $0 : nil }
        return WebhookEnvelope(eventId: id, type: type, occurredAt: created.map { $0 * 1000 })
    }

    /// A stored Stripe event; live when Stripe says `livemode`.
    public func decodeEvent(_ body: [UInt8]) throws -> ProviderEvent {
        let event = try StripeEvent.decode(body)
        return ProviderEvent(payload: event.payload, isLive: event.livemode)
    }
}
