import Foundation
import HTTPServer
import Lifecycle
import Logging
import Payments
import Storage

/// `POST /webhooks/stripe`: Stripe's events. The signature is checked over the raw body (HMAC-SHA256 of
/// `t.body` with the endpoint's secret, stripe.md §4), the event is stored durably (deduplicated by its id) and
/// only then answered 200; acting on it happens from storage (`PaymentEventProcessor`). Unknown types are
/// stored and acknowledged too: a 4xx would make Stripe resend them for three days.
struct StripeWebhookRoute: Sendable {
    let signature: StripeWebhookSignature
    let ledger: Ledger
    let processor: PaymentEventProcessor
    let metrics: Metrics
    let logger: Logger
    let clock: Clock

    /// Stripe's events are small; anything far larger is not one.
    static let maxBodyBytes = 256 * 1024

    /// The answer to a body over `maxBodyBytes`, also given by the server when the head declares one.
    func tooLarge(_ request: HTTPRequest) -> HTTPResponse {
        refuse(.contentTooLarge, "body_too_large", "The body is larger than a Stripe event.")
    }

    func receive(_ request: HTTPRequest) throws -> HTTPResponse {
        guard request.body.count <= Self.maxBodyBytes else { return tooLarge(request) }
        do {
            _ = try signature.verify(
                header: request.headers["stripe-signature"],
                body: request.body,
                clock: clock
            )
        } catch {
            logger.warning("stripe webhook refused", ["reason": error.description])
            return refuse(.badRequest, "invalid_signature", "The Stripe-Signature header does not verify.")
        }
        // Only the envelope is read here: a signed event whose contents linkout cannot act on is still stored and
        // acknowledged (and shows as unreadable), never refused, or Stripe would resend it for days and then drop it.
        guard let envelope = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let id = envelope["id"] as? String, !id.isEmpty, id.utf8.count <= 255,
            let type = envelope["type"] as? String, type.utf8.count <= 255
        else {
            logger.warning("stripe webhook refused", ["reason": "the body is not a Stripe event"])
            return refuse(.badRequest, "invalid_event", "The body is not a Stripe event.")
        }
        let isNew = try ledger.payments.storePaymentEvent(
            StoredPaymentEvent(
                provider: "stripe",
                eventId: id,
                type: type,
                body: String(decoding: request.body, as: UTF8.self),
                receivedAt: clock.nowMilliseconds()
            )
        )
        metrics.increment("linkout_payment_webhooks_total", [("outcome", isNew ? "stored" : "duplicate")])
        logger.info(
            "stripe webhook stored",
            ["payment.event_id": id, "payment.type": type, "duplicate": isNew ? "false" : "true"]
        )
        if isNew { processor.wake() }
        return JSONResponse.json(.ok, ["received": true])
    }

    private func refuse(_ status: HTTPStatus, _ code: String, _ message: String) -> HTTPResponse {
        metrics.increment("linkout_payment_webhooks_total", [("outcome", "refused")])
        return JSONResponse.error(status, code, message)
    }
}
