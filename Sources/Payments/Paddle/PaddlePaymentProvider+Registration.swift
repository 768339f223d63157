import Crypto
public import Domain

extension ProviderID {
    /// Paddle Billing, API v1 (`payments.provider: "paddle"`): the merchant of record.
    public static let paddle = ProviderID("paddle")
}

extension PaddlePaymentProvider {
    /// `payments.paddle` and its environment variables. Test or live follows the key (sandbox keys hold `_sdbx`).
    public static let registration = ProviderRegistration(
        id: .paddle,
        settings: [
            ProviderSetting("apiKey", environment: "LINKOUT_PADDLE_API_KEY", isSecret: true),
            ProviderSetting("webhookSecret", environment: "LINKOUT_PADDLE_WEBHOOK_SECRET", isSecret: true),
            ProviderSetting("checkoutURL"),
            ProviderSetting("apiBase"),
            ProviderSetting("priceIds", isMap: true),
            ProviderSetting("webhookToleranceSeconds"),
            ProviderSetting("caFile"),
        ],
        // A Paddle transaction has no expiry linkout can set (none documented), so its page stays payable past the
        // token's: with less than half an hour left (Stripe's shortest session) the person is asked for a fresh
        // link, since a sale after the expiry could never be reported on this token.
        shortestSession: 30 * Milliseconds.minute
    ) { settings, context throws(ProviderConfigurationError) in
        let key = try settings.required("apiKey")
        var configuration = PaddleConfiguration(
            apiKey: key,
            apiBase: try settings.httpURL("apiBase", default: PaddleConfiguration.defaultAPIBase(forKey: key)),
            checkoutURL: try settings.required("checkoutURL"),
            priceIds: try priceIds(settings)
        )
        guard configuration.checkoutURL.hasPrefix("https://"), PaymentPageRule.allows(configuration.checkoutURL) else {
            throw ProviderConfigurationError(
                field: settings.field("checkoutURL"),
                problem: "must be an https:// URL in printable ASCII, at most \(PaymentPageRule.longest) characters"
            )
        }
        configuration.caFile = settings.optional("caFile")
        let secret = try settings.required("webhookSecret")
        let tolerance = try settings.integer(
            "webhookToleranceSeconds",
            default: TimestampedHMAC.paddleDefaultToleranceSeconds,
            range: 5...3_600
        )
        return PaddlePaymentProvider(
            api: PaddleAPI(configuration: configuration),
            signature: .paddle(secret: secret, toleranceSeconds: tolerance),
            clock: context.clock
        )
    }

    /// A `priceIds` entry for a product the catalog does not have: a typo (`pro.lifetme`) left the product sold at
    /// linkout's own price, not the seller's Paddle price.
    public func refusal(ofCatalog productIds: Set<String>) -> (setting: String, problem: String)? {
        guard let unknown = configuration.priceIds.keys.sorted().first(where: { !productIds.contains($0) }) else {
            return nil
        }
        return ("priceIds", "names \(unknown), which is no product of the catalog")
    }

    /// `priceIds`: the seller's Paddle catalog prices by linkout product id, an object in the block
    /// (`"priceIds": {"pro.monthly": "pri_01h…"}`). A product not named is sold at linkout's own price.
    static func priceIds(_ settings: ProviderSettings) throws(ProviderConfigurationError) -> [String: String] {
        let prices = settings.map("priceIds")
        for (product, price) in prices where product.isEmpty || !price.hasPrefix("pri_") {
            throw ProviderConfigurationError(
                field: settings.field("priceIds"),
                problem: "must name a Paddle price (pri_…) for each product"
            )
        }
        return prices
    }

    /// Paddle's list (`PaddleCurrencies`), for `linkout check`: a start is not refused for it, since Paddle adds
    /// currencies and the list here may lag behind.
    public func unsoldCurrencies(_ currencies: Set<CurrencyCode>) -> [CurrencyCode] {
        currencies.filter { !PaddleCurrencies.sells($0) }.sorted { $0.rawValue < $1.rawValue }
    }

    public var id: ProviderID { .paddle }

    /// Live with a live key; a sandbox key (`_sdbx`) is test mode, its payments only reported for sandbox tokens.
    public var mode: PaymentMode { configuration.takesRealMoney ? .live : .test }

    /// Paddle is the seller of record, and the page says so near the button (`checkout_provider_paddle`).
    /// Paddle is the merchant of record: it works out and states the tax of every transaction.
    public var chargesTax: Bool { true }

    public var pageTexts: ProviderPageTexts {
        ProviderPageTexts(
            checkoutNote: mode == .live ? "checkout_provider_paddle" : "checkout_provider_paddle_test",
            mode: mode
        )
    }
}
