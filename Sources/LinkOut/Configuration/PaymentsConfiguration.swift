package import Domain
import ExternalPurchase
import Foundation
package import Lifecycle
package import Payments

extension Configuration {
    /// `payments` section: who takes the money.
    package struct Payments: Sendable {
        /// Which provider takes the money, by its id in `ProviderRegistry` (`demo`, the default, or another).
        package var provider = ProviderID.demo
        /// Apple's `taxCountry` (ISO 3166-1 alpha-3) when the provider does not say where the customer is billed
        /// (the demo provider, or a Stripe session without an address). Default `DEU`.
        package var defaultTaxCountry = "DEU"
        /// Rates for pricing currencies Apple does not take as reporting currencies (e.g. KWD): Apple wants
        /// such sales in EUR or USD at "the Bloomberg exchange rate from within 48 hours of the transaction
        /// date". Dated (`{"UZS": {"reportingCurrency": "EUR", "rates": {"2026-11-30": "0.000079"}}}`) or, the
        /// older form, one undated `rate`. A sale with no rate within 48 hours of its date is recorded and its
        /// line item held, said so in the log and the admin API, until a rate arrives.
        package var exchangeRates = ExchangeRateTable()
        /// A file of the same shape the operator updates (e.g. daily from a rate feed); read again when it
        /// changes, its currencies taking the place of `exchangeRates`' own.
        package var exchangeRatesFile: String?
        /// How the catalog's prices carry tax when the provider works none out (Stripe without `automaticTax`):
        /// `"standard"` (tax-inclusive prices, split by each country's standard rate, `TaxRates.standard`), an
        /// object of rates in percent by alpha-3 country over the standard ones (`{"DEU": "7"}`; `"0"` takes a
        /// country out), or `"none"` (prices carry no tax). Unset: none in test mode; a live provider that works
        /// out no tax refuses to start without it (the whole price would go to Apple as tax-exclusive).
        package var taxRates: TaxRates?
        /// The rates a sale's tax is split out by when the provider works none out: unset is none.
        package var taxRatesInForce: TaxRates { taxRates ?? .none }
        /// `payments.<id>` of every registered provider (keys as the provider declares them), with environment
        /// variables and secret files applied. Only the chosen provider's is checked for what it needs.
        package var providers: [ProviderID: ProviderSettings] = Dictionary(
            uniqueKeysWithValues: ProviderRegistry.all.map { ($0.id, $0.emptySettings()) }
        )

        package init() {}

        /// One provider setting: `payments[.stripe, "secretKey"]`.
        package subscript(provider: ProviderID, key: String) -> String? {
            get { providers[provider]?[key] }
            set { providers[provider]?[key] = newValue }
        }

        static func read(_ section: JSONFields, unreadSecretFiles: inout [ConfigurationError])
            throws(ConfigurationError) -> Payments
        {
            try section.rejectUnknownKeys(
                Set(["provider", "defaultTaxCountry", "exchangeRates", "exchangeRatesFile", "taxRates"])
                    .union(ProviderRegistry.all.map(\.id.rawValue))
            )
            var payments = Payments()
            payments.provider = try Self.provider(
                try section.string("provider", default: payments.provider.rawValue),
                field: "payments.provider"
            )
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
            payments.taxRates = try taxRates(section)
            for registration in ProviderRegistry.all {
                payments.providers[registration.id] = try settings(
                    of: registration,
                    from: try section.section(registration.id.rawValue),
                    unreadSecretFiles: &unreadSecretFiles
                )
            }
            return payments
        }

        /// A registered provider's id, or an error naming the field and the ids there are.
        static func provider(_ text: String, field: String) throws(ConfigurationError) -> ProviderID {
            guard let registration = ProviderRegistry.registration(ProviderID(text)) else {
                throw ConfigurationError(field: field, problem: "must be \(ProviderRegistry.names)")
            }
            return registration.id
        }

        /// A provider's block as text values: its declared keys only, a secret also from `<key>File`.
        static func settings(
            of registration: ProviderRegistration,
            from block: JSONFields,
            unreadSecretFiles: inout [ConfigurationError]
        ) throws(ConfigurationError) -> ProviderSettings {
            try block.rejectUnknownKeys(
                Set(registration.settings.flatMap { [$0.key] + ($0.fileKey.map { [$0] } ?? []) })
            )
            var settings = registration.emptySettings()
            for setting in registration.settings {
                switch block.object[setting.key] {
                case nil, .null: break
                case .string(let text): settings[setting.key] = text
                // A key is text: `true` or a number in its place is a mistake, never a key.
                case .bool where setting.isSecret, .integer where setting.isSecret:
                    throw ConfigurationError(field: block.name(setting.key), problem: "must be a string (a key)")
                case .bool(let flag): settings[setting.key] = flag ? "true" : "false"
                case .integer(let number): settings[setting.key] = String(number)
                case .object where setting.isMap:
                    // A map of text by name (a provider's price id per product): `<key>.<name>`.
                    for (name, value) in try block.stringMap(setting.key) { settings[setting.key + "." + name] = value }
                default:
                    throw ConfigurationError(
                        field: block.name(setting.key),
                        problem: setting.isMap
                            ? "must be an object of strings" : "must be a string, true or false, or a whole number"
                    )
                }
                if let fileKey = setting.fileKey, let file = try block.optionalString(fileKey), !file.isEmpty {
                    if settings[setting.key]?.isEmpty == false {
                        throw ConfigurationError.bothSet(block.name(fileKey), besides: block.name(setting.key))
                    }
                    if let secret = Configuration.secret(
                        fromFile: file,
                        field: block.name(fileKey),
                        unreadFiles: &unreadSecretFiles
                    ) {
                        settings[setting.key] = secret
                    }
                }
            }
            return settings
        }

        /// The chosen provider's registration: how long its sessions live, what it is made from. `read` admits
        /// only registered ids; a value set in code to another falls back to the first registered provider.
        package var registration: ProviderRegistration {
            ProviderRegistry.registration(provider) ?? ProviderRegistry.all[0]
        }

        /// The chosen provider, made from its settings: what it needs and lacks stops the start, naming the
        /// field (exit 2). `clock`: the server's, which the provider reads the time from.
        package func makeProvider(clock: Clock) throws(ConfigurationError) -> any PaymentProvider {
            guard let registration = ProviderRegistry.registration(provider) else {
                throw ConfigurationError(field: "payments.provider", problem: "must be \(ProviderRegistry.names)")
            }
            let made: any PaymentProvider
            do {
                made = try registration.make(
                    providers[provider] ?? registration.emptySettings(),
                    ProviderContext(defaultTaxCountry: defaultTaxCountry, clock: clock)
                )
            } catch {
                throw ConfigurationError(field: error.field, problem: error.problem)
            }
            // Real sales with no tax worked out: Apple would get each whole price as tax-exclusive (and the
            // commission estimated on it) unless the operator says how the prices carry tax.
            if made.mode == .live, !made.chargesTax, taxRates == nil {
                throw ConfigurationError(
                    field: "payments.taxRates",
                    problem: "is required: \(made.id) works out no tax, so each price is charged as it is; say how "
                        + "prices carry tax: \"standard\" (tax included, split by each country's standard VAT "
                        + "rate), an object of your own rates, or \"none\" (set automaticTax to let Stripe Tax work "
                        + "it out instead)"
                )
            }
            return made
        }

        /// `payments.taxRates`: `"standard"`, `"none"`, or rates in percent by alpha-3 country over the standard.
        static func taxRates(_ section: JSONFields) throws(ConfigurationError) -> TaxRates? {
            let field = section.name("taxRates")
            switch section.object["taxRates"] {
            case nil, .null: return nil
            case .string("standard"): return .standard
            case .string("none"): return TaxRates.none
            case .object:
                var rates = TaxRates.standard
                for (country, text) in try section.stringMap("taxRates") {
                    guard CountryCodes.isAlpha3(country) else {
                        throw ConfigurationError(field: "\(field).\(country)", problem: "must be an alpha-3 code")
                    }
                    guard let points = Self.basisPoints(percent: text), points <= 10_000 else {
                        throw ConfigurationError(
                            field: "\(field).\(country)",
                            problem: "must be a percent as decimal text, at most two decimals (\"19\", \"25.5\")"
                        )
                    }
                    rates.basisPoints[country] = points
                }
                return rates
            default:
                throw ConfigurationError(
                    field: field,
                    problem: "must be \"standard\", \"none\" or an object of rates in percent by alpha-3 country"
                )
            }
        }

        /// `"25.5"` → 2550: decimal text with at most two decimals, in integers.
        static func basisPoints(percent text: String) -> Int64? {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let whole = parts.first, (1...3).contains(whole.count),
                parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } })
            else { return nil }
            let fraction = parts.count == 2 ? String(parts[1]) : ""
            guard parts.count == 1 || (1...2).contains(fraction.count), let units = Int64(whole) else { return nil }
            return units * 100 + (Int64(fraction.padding(toLength: 2, withPad: "0", startingAt: 0)) ?? 0)
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
                        problem: rates.undated == nil
                            ? "needs rate (one rate for every date) or rates (by date, at least one)"
                            : "needs either rate (one rate for every date) or rates (by date), not both"
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
            let data = try ConfigurationFile.jsonText(
                try ConfigurationFile.read(path, limit: ConfigurationFile.textLimit, field: field),
                field: field
            )
            let object: [String: JSONValue]
            do {
                object = try JSONDecoder().decode([String: JSONValue].self, from: data)
            } catch {
                throw ConfigurationError(field: field, problem: "is not a JSON object of rates by currency")
            }
            // As in config.json: a rate written twice is one of two rates silently lost.
            if let key = TokenDecoder.duplicateKeyAnywhere(in: Array(data)) {
                throw ConfigurationError(field: field, problem: "\(path) names \"\(key)\" twice in one object")
            }
            return try rates(JSONFields(object, path: field))
        }
    }
}
