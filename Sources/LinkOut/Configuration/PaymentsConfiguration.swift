import ExternalPurchase
import Foundation
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
        /// date". Dated (`{"UZS": {"reportingCurrency": "EUR", "rates": {"2026-11-30": "0.000079"}}}`) or, the
        /// older form, one undated `rate`. A sale with no rate within 48 hours of its date is recorded and its
        /// line item held, said so in the log and the admin API, until a rate arrives.
        package var exchangeRates = ExchangeRateTable()
        /// A file of the same shape the operator updates (e.g. daily from a rate feed); read again when it
        /// changes, its currencies taking the place of `exchangeRates`' own.
        package var exchangeRatesFile: String?

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
            try section.rejectUnknownKeys([
                "provider", "defaultTaxCountry", "stripe", "exchangeRates", "exchangeRatesFile",
            ])
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
            payments.exchangeRates = try rates(try section.section("exchangeRates"))
            if let file = try section.optionalString("exchangeRatesFile"), !file.isEmpty {
                payments.exchangeRatesFile = file
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

        /// Exchange rates by pricing currency, from `payments.exchangeRates` or a rates file of the same shape.
        /// Rates are decimal text (never JSON numbers, which would pass through floating point); every error
        /// names the field.
        static func rates(_ section: JSONFields) throws(ConfigurationError) -> ExchangeRateTable {
            var table = ExchangeRateTable()
            for currency in section.object.keys.sorted() {
                let entry = try section.section(currency)
                try entry.rejectUnknownKeys(["reportingCurrency", "rate", "rates"])
                let reporting = try entry.requiredString("reportingCurrency").uppercased()
                guard reporting == "EUR" || reporting == "USD" else {
                    throw ConfigurationError(
                        field: entry.path,
                        problem: "needs reportingCurrency EUR or USD and a positive decimal rate as text, e.g. \"2.95\""
                    )
                }
                var rates = ExchangeRateTable.Entry(reportingCurrency: reporting)
                rates.undated = try entry.optionalString("rate")
                if let undated = rates.undated {
                    try requireRate(undated, reporting, field: entry.name("rate"))
                }
                let dated = try entry.section("rates")
                for date in dated.object.keys.sorted() {
                    guard let day = ExchangeRateTable.day(date) else {
                        throw ConfigurationError(field: dated.name(date), problem: "is not a date YYYY-MM-DD")
                    }
                    let text = try dated.requiredString(date)
                    try requireRate(text, reporting, field: dated.name(date))
                    rates.dated[day] = text
                }
                guard (rates.undated == nil) != rates.dated.isEmpty else {
                    throw ConfigurationError(
                        field: entry.path,
                        problem: "needs either rate (one rate for every date) or rates (by date), not both"
                    )
                }
                table.entries[currency.uppercased()] = rates
            }
            return table
        }

        private static func requireRate(_ text: String, _ reporting: String, field: String)
            throws(ConfigurationError)
        {
            guard ExchangeRate(reportingCurrency: reporting, rate: text).isValid else {
                throw ConfigurationError(
                    field: field,
                    problem: "must be a positive decimal rate as text, e.g. \"2.95\""
                )
            }
        }

        /// The rates in the file `payments.exchangeRatesFile` names.
        static func ratesFile(_ path: String) throws(ConfigurationError) -> ExchangeRateTable {
            let field = "payments.exchangeRatesFile"
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(field: field, problem: "cannot read \(path)")
            }
            let object: [String: JSONValue]
            do {
                object = try JSONDecoder().decode([String: JSONValue].self, from: data)
            } catch {
                throw ConfigurationError(field: field, problem: "is not a JSON object of rates by currency")
            }
            return try rates(JSONFields(object, path: field))
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
