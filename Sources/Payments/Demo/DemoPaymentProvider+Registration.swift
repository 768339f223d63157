public import Domain

extension ProviderID {
    /// The demo (`payments.provider: "demo"`, the default): no keys, nothing charged.
    public static let demo = ProviderID("demo")
}

extension DemoPaymentProvider {
    /// No settings of its own: it runs on linkout's own pages, at whatever address the person used.
    public static let registration = ProviderRegistration(id: .demo, settings: []) { _, context in
        DemoPaymentProvider(publicURL: "", taxCountry: TaxCountry(context.defaultTaxCountry))
    }

    public var id: ProviderID { .demo }

    public var mode: PaymentMode { .simulated }

    public var pageTexts: ProviderPageTexts {
        ProviderPageTexts(checkoutNote: "checkout_provider_demo", taxNote: .none, mode: mode)
    }

    /// The demo states the tax its page is given (none by default); it takes no money, so nothing is split.
    public var chargesTax: Bool { true }

    /// Its events come from its own page, not from a webhook: `POST /webhooks/demo` is a 404.
    public var webhook: WebhookEndpoint? { nil }

    public func verifyWebhook(body: [UInt8], header: (String) -> String?, now: Int64) throws(WebhookRefusal)
        -> WebhookEnvelope
    {
        throw .signature("the demo provider takes no webhooks")
    }

    /// A stored `DemoEvent`: a completion is a paid purchase (never live), a refund gives all of it back, a
    /// cancellation ends the session.
    public func decodeEvent(_ body: [UInt8]) throws -> ProviderEvent {
        let event = try DemoEvent.decode(body)
        let sessionId = Self.sessionId(intentId: event.intentId)
        switch event.type {
        case DemoEvent.completed:
            return ProviderEvent(
                payload: .purchaseCompleted(try completion(of: event.request, at: event.created)),
                isLive: false
            )
        case DemoEvent.refunded:
            return ProviderEvent(payload: .refunded(try refund(of: event)), isLive: false)
        case DemoEvent.cancelled:
            return ProviderEvent(
                payload: .sessionExpired(.init(sessionId: sessionId, checkoutId: event.checkoutId)),
                isLive: false
            )
        default:
            return ProviderEvent(payload: .ignored(type: event.type), isLive: false)
        }
    }

    /// The whole price back, under the payment the completion recorded (its payment intent, or the session of
    /// a subscription), tax in the same share as the completion's (none).
    private func refund(of event: DemoEvent) throws -> Refund {
        let completion = try completion(of: event.request, at: event.created)
        return Refund(
            id: event.id,
            kind: .refund,
            amount: .this(completion.amountTotal, tax: completion.amountTax),
            paymentId: completion.paymentIntentId ?? completion.sessionId,
            currency: completion.currency,
            refundedAt: event.created
        )
    }
}
