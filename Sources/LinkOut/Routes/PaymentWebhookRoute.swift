import Domain
import HTTPServer
import Lifecycle
import Logging
import Payments
import Storage

/// `POST /webhooks/{provider}`: a payment provider's events, for whichever provider the server runs with (any other id,
/// or a provider that takes no webhooks, is a 404). The provider checks the signature over the raw body (Stripe:
/// HMAC-SHA256 of `t.body` with the endpoint's secret, per Stripe's "Check the webhook signatures") and reads the
/// envelope; the event is stored durably (deduplicated by provider and event id) and only then answered 200; acting on
/// it happens from storage (`PaymentEventProcessor`). Unknown types are stored and acknowledged too: a 4xx would make
/// the provider resend them for days.
struct PaymentWebhookRoute: Sendable {
    let payments: PaymentServices
    let ledger: Ledger
    let metrics: Metrics
    let logger: Logger
    let clock: Clock

    static let path = "/webhooks/{provider}"

    /// The largest body any provider of this server takes; each provider's own limit is checked in `receive`
    /// and `tooLarge`. No provider with webhooks: no body at all (the answer is a 404 either way).
    var maxBodyBytes: Int { payments.provider.webhook?.maxBodyBytes ?? 0 }

    /// The provider a request is for, when it takes webhooks here.
    private func endpoint(_ request: HTTPRequest) -> (any PaymentProvider, WebhookEndpoint)? {
        let id = request.pathParameters["provider"] ?? Self.lastSegment(String(request.path))
        guard let provider = payments.provider(ProviderID(id)), let webhook = provider.webhook else { return nil }
        return (provider, webhook)
    }

    /// The answer to a body over the provider's limit, also given by the server when the head declares one
    /// (before path parameters are read, so the provider is found from the path itself).
    func tooLarge(_ request: HTTPRequest) -> HTTPResponse {
        guard let (_, webhook) = endpoint(request) else { return Self.notFound }
        return refuse(.contentTooLarge, "body_too_large", "The body is larger than \(webhook.eventName).")
    }

    func receive(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let (provider, webhook) = endpoint(request) else { return Self.notFound }
        guard request.body.count <= webhook.maxBodyBytes else { return tooLarge(request) }
        let name = provider.id.rawValue
        let envelope: WebhookEnvelope
        do {
            envelope = try provider.verifyWebhook(
                body: request.body,
                header: { request.headers[$0] },
                now: clock.nowMilliseconds()
            )
        } catch .signature(let reason) {
            logger.warning("payment webhook refused", ["payment.provider": name, "reason": reason])
            return refuse(
                .badRequest,
                "invalid_signature",
                "The \(webhook.signatureHeader) header does not verify."
            )
        } catch .notAnEvent(let reason) {
            logger.warning("payment webhook refused", ["payment.provider": name, "reason": reason])
            return refuse(.badRequest, "invalid_event", "The body is not \(webhook.eventName).")
        }
        let isNew = try ledger.payments.storePaymentEvent(
            StoredPaymentEvent(
                provider: provider.id,
                eventId: envelope.eventId,
                type: envelope.type,
                body: String(decoding: request.body, as: UTF8.self),
                receivedAt: clock.nowMilliseconds(),
                occurredAt: envelope.occurredAt,
                orderKey: envelope.orderKey
            )
        )
        metrics.increment("linkout_payment_webhooks_total", [("outcome", isNew ? "stored" : "duplicate")])
        logger.info(
            "payment webhook stored",
            [
                "payment.provider": name, "payment.event_id": envelope.eventId, "payment.type": envelope.type,
                "duplicate": isNew ? "false" : "true",
            ]
        )
        if isNew { payments.processor.wake() }
        return JSONResponse.json(.ok, ["received": true])
    }

    private func refuse(_ status: HTTPStatus, _ code: String, _ message: String) -> HTTPResponse {
        metrics.increment("linkout_payment_webhooks_total", [("outcome", "refused")])
        return JSONResponse.error(status, code, message)
    }

    /// What the router answers for a path it has no route for.
    static var notFound: HTTPResponse { JSONRefusals.notFound }

    private static func lastSegment(_ path: String) -> String {
        String(path.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
    }
}
