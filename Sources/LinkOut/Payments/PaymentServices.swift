import Domain
import Lifecycle
import Logging
import Outbound
import Payments
import Storage

/// The payment side of the application, built from `payments` in the configuration: the provider that takes
/// the money, the processor that turns its events into purchases and Apple line items, and the starter the
/// checkout form uses.
struct PaymentServices: Sendable {
    /// The provider `payments.provider` names, made from its settings.
    let provider: any PaymentProvider
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
    ) throws {
        let payments = configuration.payments
        provider = try payments.makeProvider(clock: clock)
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
            )
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
            providers: [provider],
            taxRates: payments.taxRatesInForce,
            logger: logger,
            metrics: metrics,
            clock: clock,
            intervalMilliseconds: configuration.reporting.pollIntervalSeconds * 1000
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

    /// The provider this server runs with under `id`; nil for any other (its webhooks are a 404).
    func provider(_ id: ProviderID) -> (any PaymentProvider)? {
        provider.id == id ? provider : nil
    }
}
