import Domain

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
            ProviderSetting("priceIds"),
            ProviderSetting("webhookToleranceSeconds"),
            ProviderSetting("caFile"),
        ]
    ) { settings, _ throws(ProviderConfigurationError) in
        let key = try settings.required("apiKey")
        var configuration = PaddleConfiguration(
            apiKey: key,
            apiBase: try settings.httpURL("apiBase", default: PaddleConfiguration.defaultAPIBase(forKey: key)),
            checkoutURL: try settings.required("checkoutURL"),
            priceIds: try priceIds(settings)
        )
        guard configuration.checkoutURL.hasPrefix("https://") || configuration.checkoutURL.hasPrefix("http://") else {
            throw ProviderConfigurationError(field: settings.field("checkoutURL"), problem: "must be an https:// URL")
        }
        configuration.caFile = settings.optional("caFile")
        let secret = try settings.required("webhookSecret")
        let tolerance = try settings.integer(
            "webhookToleranceSeconds",
            default: PaddleWebhookSignature.defaultToleranceSeconds,
            range: 5...3_600
        )
        return PaddlePaymentProvider(
            api: PaddleAPI(configuration: configuration),
            signature: PaddleWebhookSignature(secret: secret, toleranceSeconds: tolerance)
        )
    }

    /// `priceIds`: the seller's Paddle catalog prices as `product=pri_…` pairs separated by commas
    /// (`"pro.monthly=pri_01h…,pro.lifetime=pri_01j…"`). A product not named is sold at linkout's price.
    static func priceIds(_ settings: ProviderSettings) throws(ProviderConfigurationError) -> [String: String] {
        var result: [String: String] = [:]
        for pair in (settings.optional("priceIds") ?? "").split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).trimmingSpaces() }
            guard parts.count == 2, !parts[0].isEmpty, parts[1].hasPrefix("pri_"), result[parts[0]] == nil else {
                throw ProviderConfigurationError(
                    field: settings.field("priceIds"),
                    problem: "must be product=pri_… pairs separated by commas"
                )
            }
            result[parts[0]] = parts[1]
        }
        return result
    }

    public var id: ProviderID { .paddle }

    /// Live with a live key; a sandbox key (`_sdbx`) is test mode, its payments only reported for sandbox tokens.
    public var mode: PaymentMode { configuration.takesRealMoney ? .live : .test }

    /// Paddle is the seller of record, and the page says so near the button (`checkout_provider_paddle`).
    public var pageTexts: ProviderPageTexts {
        ProviderPageTexts(
            checkoutNote: mode == .live ? "checkout_provider_paddle" : "checkout_provider_paddle_test",
            mode: mode
        )
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var result = Substring(self)
        while result.first == " " { result.removeFirst() }
        while result.last == " " { result.removeLast() }
        return String(result)
    }
}
