import ExternalPurchase
import Payments

extension Configuration {
    /// `payments` section: who takes the money.
    package struct Payments: Sendable {
        package enum Provider: String, Sendable {
            /// Runs with no keys: a page that says nothing is charged completes or cancels the payment, and
            /// produces the same purchases and Apple line items as a real provider.
            case demo
            /// Stripe Checkout.
            case stripe
        }

        package var provider = Provider.demo
        /// Apple's `taxCountry` (ISO 3166-1 alpha-3) when the provider does not say where the customer is billed
        /// (the demo provider, or a Stripe session without an address). Default `DEU`.
        package var defaultTaxCountry = "DEU"
        package var stripe = Stripe()
        /// Rates for pricing currencies Apple does not take as reporting currencies (e.g. KWD): Apple wants
        /// such sales in EUR or USD at "the Bloomberg exchange rate from within 48 hours of the transaction
        /// date". The operator keeps these current; a sale in such a currency without a rate is recorded but
        /// cannot be reported, and says so in the log and the admin API.
        package var exchangeRates: [String: ExchangeRate] = [:]

        package init() {}

        /// `payments.stripe`.
        package struct Stripe: Sendable {
            /// `sk_test_…` or `sk_live_…` (`LINKOUT_STRIPE_SECRET_KEY`, or `secretKeyFile`). Never logged.
            package var secretKey = ""
            /// `whsec_…` of the webhook endpoint (`LINKOUT_STRIPE_WEBHOOK_SECRET`, or `webhookSecretFile`).
            package var webhookSecret = ""
            /// Stripe's API host; tests point it at a fake.
            package var apiBase = "https://api.stripe.com"
            /// Let Stripe Tax compute tax (and collect the address it needs).
            package var automaticTax = false
            /// How old a webhook's signed timestamp may be, in seconds (Stripe's libraries use 300).
            package var webhookToleranceSeconds: Int64 = 300
            /// CA certificates to trust instead of the system store (a test CA). TLS verification stays on.
            package var caFile: String?

            package init() {}
        }

        static func read(_ section: JSONFields) throws(ConfigurationError) -> Payments {
            try section.rejectUnknownKeys(["provider", "defaultTaxCountry", "stripe", "exchangeRates"])
            var payments = Payments()
            let provider = try section.string("provider", default: payments.provider.rawValue)
            guard let known = Provider(rawValue: provider) else {
                throw ConfigurationError(field: "payments.provider", problem: "must be demo or stripe")
            }
            payments.provider = known
            payments.defaultTaxCountry = try section.string("defaultTaxCountry", default: payments.defaultTaxCountry)
            guard CountryCodes.isAlpha3(payments.defaultTaxCountry) else {
                throw ConfigurationError(
                    field: "payments.defaultTaxCountry",
                    problem: "must be an ISO 3166-1 alpha-3 code such as DEU (Apple's taxCountry)"
                )
            }
            let rates = try section.section("exchangeRates")
            for currency in rates.object.keys.sorted() {
                let entry = try rates.section(currency)
                try entry.rejectUnknownKeys(["reportingCurrency", "rate"])
                let rate = ExchangeRate(
                    reportingCurrency: try entry.requiredString("reportingCurrency"),
                    rate: try entry.requiredString("rate")
                )
                guard rate.isValid else {
                    throw ConfigurationError(
                        field: entry.path,
                        problem: "needs reportingCurrency EUR or USD and a positive decimal rate as text, e.g. \"2.95\""
                    )
                }
                payments.exchangeRates[currency.uppercased()] = rate
            }
            let stripe = try section.section("stripe")
            try stripe.rejectUnknownKeys([
                "secretKey", "secretKeyFile", "webhookSecret", "webhookSecretFile", "apiBase", "automaticTax",
                "webhookToleranceSeconds", "caFile",
            ])
            payments.stripe.secretKey = try stripe.string("secretKey", default: payments.stripe.secretKey)
            if let file = try stripe.optionalString("secretKeyFile"), !file.isEmpty {
                payments.stripe.secretKey = try Configuration.secret(
                    fromFile: file,
                    field: "payments.stripe.secretKeyFile"
                )
            }
            payments.stripe.webhookSecret = try stripe.string("webhookSecret", default: payments.stripe.webhookSecret)
            if let file = try stripe.optionalString("webhookSecretFile"), !file.isEmpty {
                payments.stripe.webhookSecret = try Configuration.secret(
                    fromFile: file,
                    field: "payments.stripe.webhookSecretFile"
                )
            }
            payments.stripe.apiBase = try stripe.string("apiBase", default: payments.stripe.apiBase)
            try Configuration.requireHTTPURL(payments.stripe.apiBase, field: "payments.stripe.apiBase")
            payments.stripe.automaticTax = try stripe.bool("automaticTax", default: payments.stripe.automaticTax)
            payments.stripe.webhookToleranceSeconds = try stripe.integer(
                "webhookToleranceSeconds",
                default: payments.stripe.webhookToleranceSeconds,
                range: 10...86_400
            )
            if let caFile = try stripe.optionalString("caFile"), !caFile.isEmpty { payments.stripe.caFile = caFile }
            return payments
        }

        /// Checks that need the environment applied first: a Stripe shop cannot start without its keys.
        func validate() throws(ConfigurationError) {
            guard provider == .stripe else { return }
            guard !stripe.secretKey.isEmpty else {
                throw ConfigurationError(
                    field: "payments.stripe.secretKey",
                    problem: "is required with provider stripe (or LINKOUT_STRIPE_SECRET_KEY, or secretKeyFile)"
                )
            }
            guard !stripe.webhookSecret.isEmpty else {
                throw ConfigurationError(
                    field: "payments.stripe.webhookSecret",
                    problem: "is required with provider stripe (or LINKOUT_STRIPE_WEBHOOK_SECRET, or webhookSecretFile)"
                )
            }
        }
    }
}
