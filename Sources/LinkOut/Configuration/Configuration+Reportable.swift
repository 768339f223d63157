import Domain
import ExternalPurchase
import Payments

extension Configuration {
    /// A price whose line item would pass linkout's ceiling (`ReportValidator.maximumMilliUnits`), in its own
    /// currency or converted with any rate the operator gave, is refused here: sold, it would be paid and then set
    /// aside, never reported. A dated rate added later is checked at each sale as before.
    static func checkReportable(_ catalog: [Product], rates: ExchangeRateTable) throws(ConfigurationError) {
        for (index, product) in catalog.enumerated() {
            for (currency, price) in product.prices.sorted(by: { $0.key < $1.key }) {
                let milliUnits = MinorUnits.milliUnits(price.minorUnits, currency: currency)
                var reported = [(currency, milliUnits)]
                if let entry = rates.entries[currency],
                    !ReportValidator.reportingCurrencies.contains(CurrencyCode(currency))
                {
                    reported = ([entry.undated].compactMap { $0 } + entry.dated.values).compactMap { text in
                        ExchangeRate(reportingCurrency: entry.reportingCurrency, rate: text).fraction.map {
                            (
                                entry.reportingCurrency,
                                AppleLineItems.mulDivRounded(milliUnits, $0.numerator, $0.denominator)
                            )
                        }
                    }
                }
                for (reportingCurrency, amount) in reported where amount > ReportValidator.maximumMilliUnits {
                    throw ConfigurationError(
                        field: "catalog[\(index)].price.\(currency)",
                        problem:
                            "comes to more than a billion \(reportingCurrency), the most linkout reports to Apple in "
                            + "one line item: such a sale would be paid and never reported"
                    )
                }
            }
        }
    }
}
