public import Domain

/// A payment provider as one value: it starts checkouts, verifies and decodes its webhooks into `PaymentEvent`,
/// says whether its money is real, and may ask its own API for more while an event is acted on. The application
/// knows providers only through this protocol and `ProviderRegistry`; adding one is a folder of its own beside
/// `Stripe/`, `Paddle/` and `Demo/`, one line in the registry, and its page texts.
///
/// `startCheckout` and `resolve` block (a provider calls its API through the blocking libcurl client), so call
/// them from a worker thread, never from an event loop. `startCheckout` is safe to call again for the same
/// `CheckoutRequest.intentId`: a provider must answer a repeat with the same session, not a second one (the
/// person may press the button twice, or a retry page may resend the form).
///
/// What the provider learns later arrives as events: a webhook (`webhook`, `verifyWebhook`) or a page of
/// linkout's own (the demo's). Either way the raw event is stored first, deduplicated by provider and event id,
/// and acted on from storage by the background processor, which calls `decodeEvent` and then `resolve`.
public protocol PaymentProvider: Sendable {
    /// The id it registers under: stored with every session, event and purchase, the `{provider}` of its
    /// webhook route, and the name in logs and metrics.
    var id: ProviderID { get }

    /// Whether payments move real money (a live key), test money, or none at all. A payment that is not live is
    /// reported to Apple only for a sandbox token, and the pages say what it was.
    var mode: PaymentMode { get }

    /// What the checkout and result pages say about this provider.
    /// Whether the provider works out the tax in what it charges and says how much it is (Paddle as merchant of
    /// record; Stripe with Stripe Tax). When not, the catalog's prices are charged as they are, tax included, and
    /// linkout splits the tax out by `payments.taxRates` (`TaxRates`).
    var chargesTax: Bool { get }
    var pageTexts: ProviderPageTexts { get }

    /// Why the provider cannot sell a product of this kind (a billing interval it does not take), or nil. Asked
    /// for every catalog product at start, so a shop never runs with a product no one could buy.
    func refusal(of kind: CheckoutRequest.Product.Kind) -> String?

    /// Why the provider cannot charge this price (decimal text, as `CheckoutRequest.Price` carries it), or nil.
    /// Asked for every catalog price at start: a price it refuses failed every sale instead.
    func refusal(ofPrice price: CheckoutRequest.Price) -> String?

    /// The provider's own settings that name a product the catalog does not have, as (setting, problem): a typo
    /// in such a name quietly sold the product another way. Asked once at start with the catalog's product ids.
    func refusal(ofCatalog productIds: Set<String>) -> (setting: String, problem: String)?

    /// The currencies of `currencies` the provider does not sell in, as far as linkout knows (`linkout check`).
    func unsoldCurrencies(_ currencies: Set<CurrencyCode>) -> [CurrencyCode]

    /// Starts (or finds again) the payment session for one checkout intent.
    func startCheckout(_ request: CheckoutRequest) throws(PaymentError) -> CheckoutRedirect

    /// How `POST /webhooks/{provider}` takes this provider's deliveries; nil when it takes none (a 404).
    var webhook: WebhookEndpoint? { get }

    /// Checks a delivery's signature over the body exactly as received, then reads just enough of it to store
    /// it: the event's id (to deduplicate on) and type. Nothing else in the body is believed here. Runs on the
    /// request's worker thread: no calls out.
    /// - Parameters:
    ///   - header: the delivery's header by lower-case name.
    ///   - now: UNIX ms, from the injected clock.
    func verifyWebhook(body: [UInt8], header: (String) -> String?, now: Int64) throws(WebhookRefusal)
        -> WebhookEnvelope

    /// What a stored event (its raw body) means for linkout. Unknown types decode to `.ignored`; a known type
    /// with missing or mistyped fields throws, and the event is kept as unreadable.
    func decodeEvent(_ body: [UInt8]) throws -> ProviderEvent

    /// Completes a decoded event from the provider's API before it is acted on (a merchant of record that sends
    /// the customer's address only on request). Called by the background processor, never in the webhook
    /// request; an error leaves the event stored and it is tried again later. Most providers have nothing to
    /// add: the default returns the event as it is.
    func resolve(_ event: ProviderEvent) throws(PaymentError) -> ProviderEvent

    /// Proves the provider takes this installation's key by reading one harmless object with it (`linkout check
    /// --online`); changes nothing. Returns what was read. A provider without keys (the demo) has nothing to prove.
    func checkCredentials() throws(PaymentError) -> String
}

extension PaymentProvider {
    public func refusal(of kind: CheckoutRequest.Product.Kind) -> String? { nil }

    public func refusal(ofPrice price: CheckoutRequest.Price) -> String? { nil }

    public func refusal(ofCatalog productIds: Set<String>) -> (setting: String, problem: String)? { nil }

    public func unsoldCurrencies(_ currencies: Set<CurrencyCode>) -> [CurrencyCode] { [] }

    public func resolve(_ event: ProviderEvent) throws(PaymentError) -> ProviderEvent { event }

    public func checkCredentials() throws(PaymentError) -> String { "no keys to check" }

    /// Only live payments are sales: test mode and the demo never are.
    public var takesRealMoney: Bool { mode == .live }
}
