public import Domain

/// Everything a provider needs to start one payment: which checkout it belongs to, what is bought, at what
/// price, and where the person returns afterwards. The application fills it from its catalog and the checkout
/// intent it has just recorded.
public struct CheckoutRequest: Sendable, Equatable {
    /// The recorded checkout intent. Providers derive their idempotency from it (Stripe's `Idempotency-Key`), so
    /// the same intent never opens two payment sessions. At most 200 characters.
    public var intentId: String
    /// linkout's checkout id; Stripe gets it as `client_reference_id` and returns it in every session event.
    public var checkoutId: CheckoutID
    /// The Apple token's `externalPurchaseId`, when the visit came with a token (US link-outs carry none).
    public var externalPurchaseId: ExternalPurchaseID?
    /// The app the purchase is for.
    public var bundleId: BundleID
    public var product: Product
    public var price: Price
    /// The language the checkout page was shown in (BCP 47, e.g. `de`, `en-GB`, `pt-BR`); the payment page
    /// follows it when the provider supports it.
    public var language: String
    /// Where the person goes after paying. The Stripe provider adds `session_id={CHECKOUT_SESSION_ID}` when the URL
    /// does not already carry the placeholder (Stripe: "Customize your success page").
    public var successURL: String
    /// Where the person goes when they back out of the payment page.
    public var cancelURL: String
    /// Whether the provider calculates and collects tax (Stripe Tax, `automatic_tax[enabled]`).
    public var automaticTax: Bool
    /// When the payment page must close (UNIX seconds), e.g. when the token expires: Apple takes no line item
    /// dated after a token's `tokenExpirationDate`. Nil: the provider's default (Stripe: 24 hours).
    public var expiresAt: Int64?

    public init(
        intentId: String,
        checkoutId: CheckoutID,
        externalPurchaseId: ExternalPurchaseID?,
        bundleId: BundleID,
        product: Product,
        price: Price,
        language: String,
        successURL: String,
        cancelURL: String,
        automaticTax: Bool = false,
        expiresAt: Int64? = nil
    ) {
        self.intentId = intentId
        self.checkoutId = checkoutId
        self.externalPurchaseId = externalPurchaseId
        self.bundleId = bundleId
        self.product = product
        self.price = price
        self.language = language
        self.successURL = successURL
        self.cancelURL = cancelURL
        self.automaticTax = automaticTax
        self.expiresAt = expiresAt
    }

    /// The catalog product being bought.
    public struct Product: Sendable, Equatable {
        /// The catalog id; it becomes Apple's `productIdentifier` (at most 256 characters; Apple: "productIdentifier").
        public var id: String
        /// The name the person sees on the payment page, in the page's language.
        public var displayName: String
        public var kind: Kind

        public init(id: String, displayName: String, kind: Kind) {
            self.id = id
            self.displayName = displayName
            self.kind = kind
        }

        public enum Kind: Sendable, Equatable {
            case oneTime
            case subscription(BillingInterval)
        }
    }

    /// A price as configured: an ISO 4217 code and decimal text (`"29.99"`). Configuration never holds money as
    /// floating point; providers convert the text exactly (see `MinorUnits`).
    public struct Price: Sendable, Equatable {
        /// ISO 4217, any case (`EUR`, `jpy`).
        public var currency: CurrencyCode
        /// Decimal text with `.` as the separator: `"29.99"`, `"500"`, `"5.120"`.
        public var amount: String

        public init(currency: CurrencyCode, amount: String) {
            self.currency = currency
            self.amount = amount
        }
    }
}
