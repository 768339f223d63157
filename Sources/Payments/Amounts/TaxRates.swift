import Domain

/// How the catalog's prices carry tax when the provider works none out (`PaymentProvider.chargesTax` false:
/// Stripe without Stripe Tax charges the price as it is). Prices shown to people in the EU and Japan include tax,
/// so the tax is split out of what was charged by the billing country's rate: Apple gets the tax-exclusive
/// amount and the tax (`amountTaxExclusive`, `taxAmount`), and the commission is estimated on the former, rather
/// than the whole price going out as tax-exclusive. Configured by `payments.taxRates`.
public struct TaxRates: Sendable, Equatable {
    /// Rates in basis points (1900 is 19 %) by ISO 3166-1 alpha-3 (Apple's `taxCountry`).
    public var basisPoints: [String: Int64]

    public init(basisPoints: [String: Int64]) {
        self.basisPoints = basisPoints
    }

    /// Prices carry no tax: nothing is split out (tax 0, as the provider reported).
    public static let none = TaxRates(basisPoints: [:])

    /// Whether any sale has tax split out of its price.
    public var splitsOutTax: Bool { !basisPoints.isEmpty }

    /// The standard VAT rates of the EU member states (European Commission, "VAT rates applied in the Member
    /// States", with the changes up to 2025-12: Finland 25.5 % from 2024-09-01, Slovakia 23 % from 2025-01-01,
    /// Estonia 24 % from 2025-07-01, Romania 21 % from 2025-08-01) and Japan's consumption tax (10 %, National
    /// Tax Agency). Reduced rates (e-books, press) and Brazil's taxes are the operator's to add: Brazil has no
    /// single rate.
    public static let standard = TaxRates(basisPoints: [
        "AUT": 2000, "BEL": 2100, "BGR": 2000, "HRV": 2500, "CYP": 1900, "CZE": 2100, "DNK": 2500, "EST": 2400,
        "FIN": 2550, "FRA": 2000, "DEU": 1900, "GRC": 2400, "HUN": 2700, "IRL": 2300, "ITA": 2200, "LVA": 2100,
        "LTU": 2100, "LUX": 1700, "MLT": 1800, "NLD": 2100, "POL": 2300, "PRT": 2300, "ROU": 2100, "SVK": 2300,
        "SVN": 2200, "ESP": 2100, "SWE": 2500, "JPN": 1000,
    ])

    /// The tax inside a tax-inclusive `total` (minor units) for a customer billed in `country` (alpha-2 as
    /// providers send it, or alpha-3): `total × rate / (1 + rate)`, rounded half up, in integers; 0 where no rate
    /// is known.
    public func includedTax(in total: Int64, country: String) -> Int64 {
        let code = country.count == 2 ? CountryCodes.alpha3(forAlpha2: country.uppercased()) : country.uppercased()
        guard total > 0, let code, let rate = basisPoints[code], rate > 0 else { return 0 }
        let numerator = total.multipliedReportingOverflow(by: rate)
        guard !numerator.overflow else { return 0 }
        let denominator = 10_000 + rate
        return (numerator.partialValue + denominator / 2) / denominator
    }

    /// `event` with the tax split out of what was charged wherever the provider stated none; the customer's
    /// billing country, else `fallbackCountry` (alpha-3), decides the rate.
    public func applied(to event: PaymentEvent, fallbackCountry: String) -> PaymentEvent {
        switch event {
        case .purchaseCompleted(var purchase) where purchase.amountTax == 0:
            purchase.amountTax = includedTax(
                in: purchase.amountTotal,
                country: purchase.customerCountry ?? fallbackCountry
            )
            return .purchaseCompleted(purchase)
        case .renewalPaid(let invoice) where invoice.tax == 0:
            return .renewalPaid(split(invoice, fallbackCountry: fallbackCountry))
        case .subscriptionChanged(let invoice) where invoice.tax == 0:
            return .subscriptionChanged(split(invoice, fallbackCountry: fallbackCountry))
        case .firstInvoicePaid(let invoice) where invoice.tax == 0:
            return .firstInvoicePaid(split(invoice, fallbackCountry: fallbackCountry))
        default:
            return event
        }
    }

    private func split(_ invoice: InvoicePayment, fallbackCountry: String) -> InvoicePayment {
        var split = invoice
        split.tax = includedTax(in: invoice.total, country: invoice.customerCountry ?? fallbackCountry)
        split.totalExcludingTax = invoice.total - split.tax
        return split
    }
}
