import Lifecycle
import Logging
import Outbound
import Payments
import Storage

/// The payment side of the application, built from `payments` in the configuration: the provider that takes
/// the money, the processor that turns its events into purchases and Apple line items, and the starter the
/// checkout form uses.
struct PaymentServices: Sendable {
    let provider: any PaymentProvider
    let demo: DemoPaymentProvider?
    let webhookSignature: StripeWebhookSignature?
    let mapper: PaymentChangeMapper
    let processor: PaymentEventProcessor
    let starter: PaymentStarter
    /// Entitlement events to the developer's backend; nil without `webhooks.url`.
    let webhooks: WebhookSender?

    init(
        configuration: Configuration,
        ledger: Ledger,
        identifiers: Identifiers,
        reporting: ReportingService,
        metrics: Metrics,
        logger: Logger,
        clock: Clock
    ) {
        let payments = configuration.payments
        switch payments.provider {
        case .demo:
            // A path on this server, not `publicURL`: the demo works from whatever address the person used.
            let demo = DemoPaymentProvider(publicURL: "", taxCountry: payments.defaultTaxCountry)
            self.demo = demo
            provider = demo
            webhookSignature = nil
        case .stripe:
            var stripe = StripePaymentProvider.Configuration(secretKey: payments.stripe.secretKey)
            stripe.apiBase = payments.stripe.apiBase
            stripe.caFile = payments.stripe.caFile
            provider = StripePaymentProvider(configuration: stripe)
            demo = nil
            webhookSignature = StripeWebhookSignature(
                secret: payments.stripe.webhookSecret,
                toleranceSeconds: payments.stripe.webhookToleranceSeconds
            )
        }
        mapper = PaymentChangeMapper(
            ledger: ledger,
            catalog: configuration.catalog,
            lineItems: AppleLineItems(fallbackTaxCountry: payments.defaultTaxCountry),
            rates: ExchangeRateSource(
                configured: payments.exchangeRates,
                file: payments.exchangeRatesFile,
                logger: logger
            ),
            entitlements: EntitlementEvents(
                identifiers: identifiers,
                ledger: ledger,
                webhooksEnabled: configuration.webhooks.isEnabled,
                codeLifetimeMilliseconds: configuration.redemption.codeLifetimeSeconds * 1000
            ),
            liveKey: payments.takesRealMoney
        )
        let webhooks =
            configuration.webhooks.isEnabled
            ? WebhookSender(
                configuration: configuration.webhooks,
                leaseMilliseconds: configuration.storage.leaseSeconds * 1000,
                ledger: ledger,
                metrics: metrics,
                logger: logger,
                clock: clock
            )
            : nil
        self.webhooks = webhooks
        processor = PaymentEventProcessor(
            ledger: ledger,
            mapper: mapper,
            logger: logger,
            clock: clock
        ) {
            // New line items are reported, new entitlement events delivered, without waiting for a poll.
            reporting.wake()
            webhooks?.wake()
        }
        starter = PaymentStarter(
            provider: provider,
            ledger: ledger,
            identifiers: identifiers,
            configuration: configuration,
            logger: logger,
            clock: clock
        )
    }
}
