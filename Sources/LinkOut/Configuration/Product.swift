package import Domain
package import Payments

/// A product offered on the checkout page (`catalog` in config.json).
package struct Product: Sendable, Equatable {
    package typealias Kind = PurchaseKind

    package var id: String
    package var kind: Kind
    /// Name by language code (`en`, `de`, ...).
    package var names: [String: String]
    /// What the product includes, by language code: the checkout shows it under the name.
    package var descriptions: [String: String] = [:]
    /// Price by currency code.
    package var prices: [String: Money]
    /// How often a subscription renews (`interval`: day, week, month or year; `intervalCount`, default 1).
    /// Subscriptions without one renew monthly.
    package var interval: BillingInterval?

    package init(
        id: String,
        kind: Kind,
        names: [String: String],
        prices: [String: Money],
        interval: BillingInterval? = nil
    ) {
        self.id = id
        self.kind = kind
        self.names = names
        self.prices = prices
        self.interval = kind == .subscription ? interval ?? BillingInterval(.month) : nil
    }

    /// The name in `language`, else English, else any.
    package func name(language: String) -> String {
        names[language] ?? names["en"] ?? names.values.sorted().first ?? id
    }

    /// What the product includes in `language`, else English, else nothing.
    package func description(language: String) -> String? {
        descriptions[language] ?? descriptions["en"]
    }

    /// The catalog a fresh configuration offers.
    static let defaultCatalog = [
        Product(
            id: "pro.lifetime",
            kind: .oneTime,
            names: ["en": "Pro forever", "de": "Pro für immer"],
            prices: ["EUR": Money(currency: "EUR", decimal: "29.99"), "USD": Money(currency: "USD", decimal: "29.99")]
                .compactMapValues { $0 }
        )
    ]

    static func readList(_ list: [JSONFields]) throws(ConfigurationError) -> [Product] {
        var catalog: [Product] = []
        for item in list {
            try item.rejectUnknownKeys([
                "id", "type", "name", "description", "price", "interval", "intervalCount",
            ])
            let id = try item.requiredString("id")
            guard !id.isEmpty, !catalog.contains(where: { $0.id == id }) else {
                throw ConfigurationError(field: item.name("id"), problem: "must be present and unique")
            }
            guard let kind = Kind(rawValue: try item.string("type", default: Kind.oneTime.rawValue)) else {
                throw ConfigurationError(field: item.name("type"), problem: "must be oneTime or subscription")
            }
            let names = try item.stringMap("name")
            guard !names.isEmpty else {
                throw ConfigurationError(field: item.name("name"), problem: "needs at least one language")
            }
            var prices: [String: Money] = [:]
            for (currency, text) in try item.stringMap("price") {
                let field = item.name("price") + "." + currency
                guard CurrencyCode(currency).isWellFormed else {
                    throw ConfigurationError(field: field, problem: "must be an ISO 4217 code in capitals, such as EUR")
                }
                // What every checkout converts it with: a price it refuses was taken here and failed each sale
                // with "payment is not available right now". Its error names what is wrong (the currency's
                // decimals, the digits), where the catalog's own reading below only knows that something is.
                let minor: Int64
                do throws(MinorUnitsError) {
                    minor = try MinorUnits.parse(text, currency: currency)
                } catch {
                    throw ConfigurationError(field: field, problem: "cannot be charged: \(error)")
                }
                // A price of nothing is no sale: no provider charges it, and Apple would be told of a purchase of 0.
                guard minor > 0 else {
                    throw ConfigurationError(field: field, problem: "must be more than 0: nothing can be charged")
                }
                guard let money = Money(currency: CurrencyCode(currency), decimal: text) else {
                    let decimals = MinorUnits.exponent(of: currency)
                    throw ConfigurationError(
                        field: field,
                        problem: "must be digits with at most the \(decimals) decimals of \(currency), such as \""
                            + MinorUnits.decimalText(2999, currency: currency) + "\""
                    )
                }
                prices[currency] = money
            }
            guard !prices.isEmpty else {
                throw ConfigurationError(field: item.name("price"), problem: "needs at least one currency")
            }
            var interval: BillingInterval?
            if let unit = try item.optionalString("interval") {
                guard kind == .subscription, let known = BillingInterval.Unit(rawValue: unit) else {
                    throw ConfigurationError(
                        field: item.name("interval"),
                        problem: "must be day, week, month or year, on subscriptions only"
                    )
                }
                interval = BillingInterval(known, count: try item.int("intervalCount", default: 1, range: 1...365))
            }
            var product = Product(id: id, kind: kind, names: names, prices: prices, interval: interval)
            product.descriptions = try item.stringMap("description")
            catalog.append(product)
        }
        return catalog
    }
}
