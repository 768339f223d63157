public import Domain

extension ProviderID {
    /// Stripe Checkout (`payments.provider: "stripe"`).
    public static let stripe = ProviderID("stripe")
}

extension StripePaymentProvider {
    /// `payments.stripe` and its environment variables. Test or live follows the key (`sk_live_`, `rk_live_`).
    public static let registration = ProviderRegistration(
        id: .stripe,
        settings: [
            ProviderSetting("secretKey", environment: "LINKOUT_STRIPE_SECRET_KEY", isSecret: true),
            ProviderSetting("webhookSecret", environment: "LINKOUT_STRIPE_WEBHOOK_SECRET", isSecret: true),
            ProviderSetting("apiBase"),
            ProviderSetting("automaticTax"),
            ProviderSetting("webhookToleranceSeconds"),
            ProviderSetting("caFile"),
        ],
        // A Checkout Session lives 30 minutes to 24 hours (`expires_at`, Stripe API reference: Create a Checkout
        // Session).
        sessionLifetime: Milliseconds.day,
        shortestSession: 30 * Milliseconds.minute
    ) { settings, _ throws(ProviderConfigurationError) in
        var configuration = Configuration(secretKey: try settings.required("secretKey"))
        // A publishable key is the one a browser may see; Stripe's API takes only a secret or restricted key.
        guard !configuration.secretKey.hasPrefix("pk_") else {
            throw ProviderConfigurationError(
                field: settings.field("secretKey"),
                problem: "is a publishable key (pk_…); use the secret key (sk_…) or a restricted key (rk_…)"
            )
        }
        // Anything else was taken as a test key ("stripe, test mode" in `linkout check`) and failed at the first
        // checkout.
        guard Self.secretKeyPrefixes.contains(where: configuration.secretKey.hasPrefix) else {
            throw ProviderConfigurationError(
                field: settings.field("secretKey"),
                problem: "is not a Stripe secret key: it starts with "
                    + Self.secretKeyPrefixes.joined(separator: ", ")
            )
        }
        configuration.webhookSecret = try settings.required("webhookSecret")
        // An endpoint's signing secret is `whsec_…` (Stripe's webhook documentation; the Stripe CLI's too): the
        // secret key or a typo in its place was taken, and every event was then refused as badly signed.
        guard configuration.webhookSecret.hasPrefix(Self.webhookSecretPrefix),
            configuration.webhookSecret.count > Self.webhookSecretPrefix.count
        else {
            throw ProviderConfigurationError(
                field: settings.field("webhookSecret"),
                problem: "is not a Stripe webhook signing secret: it starts with \(Self.webhookSecretPrefix) (the "
                    + "endpoint's \"Signing secret\" in the dashboard)"
            )
        }
        configuration.apiBase = try settings.httpURL("apiBase", default: configuration.apiBase)
        configuration.automaticTax = try settings.bool("automaticTax", default: false)
        configuration.webhookToleranceSeconds = try settings.integer(
            "webhookToleranceSeconds",
            default: configuration.webhookToleranceSeconds,
            range: 10...86_400
        )
        configuration.caFile = settings.optional("caFile")
        return StripePaymentProvider(configuration: configuration)
    }

    /// Stripe bills a subscription at least once in three years (Stripe API reference: Create a Checkout Session).
    public func refusal(of kind: CheckoutRequest.Product.Kind) -> String? {
        guard case .subscription(let interval) = kind, !interval.isValidForStripe else { return nil }
        return "must be at most three years: Stripe bills a subscription at least once in three years"
    }

    /// Stripe's own amounts (`StripeAmount`: at most 8 digits, ISK in whole krónur), the conversion every sale
    /// makes.
    public func refusal(ofPrice price: CheckoutRequest.Price) -> String? {
        let minor: Int64
        do throws(StripeAmountError) {
            minor = try StripeAmount.minorUnits(price.amount, currency: price.currency.rawValue.lowercased())
        } catch {
            return "cannot be charged by Stripe: \(error.description)"
        }
        let code = price.currency.rawValue.uppercased()
        if let minimum = Self.minimumCharge[code], minor < minimum {
            return "cannot be charged by Stripe: under its minimum charge of "
                + MinorUnits.decimalText(minimum, currency: code) + " \(code)"
        }
        return nil
    }

    /// Stripe's minimum charge in minor units for USD, EUR, GBP and JPY (its currency documentation lists one per
    /// currency; these four are the ones checked here): every checkout of a lower price fails at Stripe. A charge
    /// must also come to about 0.50 USD in the account's settlement currency, which linkout does not know, so a
    /// price just above these may still be refused for an account that settles in another currency.
    static let minimumCharge: [String: Int64] = ["USD": 50, "EUR": 50, "GBP": 30, "JPY": 50]

    public var id: ProviderID { .stripe }

    /// How an endpoint's signing secret starts (Stripe's webhook documentation).
    static let webhookSecretPrefix = "whsec_"

    /// The secret and restricted keys, test and live (Stripe's API keys documentation).
    static let secretKeyPrefixes = ["sk_test_", "sk_live_", "rk_test_", "rk_live_"]

    /// Live only with a live key (`sk_live_`, or a restricted `rk_live_`); any other key is test mode.
    public var mode: PaymentMode {
        ["sk_live_", "rk_live_"].contains { configuration.secretKey.hasPrefix($0) } ? .live : .test
    }

    public var chargesTax: Bool { configuration.automaticTax }

    public var pageTexts: ProviderPageTexts {
        ProviderPageTexts(
            checkoutNote: mode == .live ? "checkout_provider_stripe" : "checkout_provider_stripe_test",
            taxNote: configuration.automaticTax ? .added : .included,
            mode: mode
        )
    }
}
