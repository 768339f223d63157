import Domain
import Storage

/// Revenue per day or per month, by app, environment, provider, product, tax country and currency, from the daily money
/// roll-up. Amounts are integer milli-units (Apple's unit; Apple: "Line item fields"): of the reporting currency, or of
/// the pricing currency where named `…Pricing`. The commission figures are estimates.
struct RevenueReport: Encodable, Sendable {
    enum Period: String, Sendable {
        case day, month
    }

    struct Row: Encodable, Sendable, Equatable {
        /// `2026-11-08` (by day) or `2026-11` (by month), UTC.
        var period: String
        var bundleId: BundleID
        var environment: Environment
        var provider: ProviderID
        var productId: ProductID
        var taxCountry: TaxCountry
        var pricingCurrency: CurrencyCode
        var reportingCurrency: CurrencyCode
        var salesCount: Int64
        var refundsCount: Int64
        /// Tax included, reporting currency.
        var grossSales: Int64
        var refunds: Int64
        var net: Int64
        /// Tax on sales less tax refunded.
        var tax: Int64
        var grossSalesPricing: Int64
        var refundsPricing: Int64
        var netPricing: Int64
        var commissionEstimate: Int64
        var commissionableLineItems: Int64
    }

    /// Sums per environment and reporting currency (amounts in different currencies are never added).
    struct Total: Encodable, Sendable, Equatable {
        var environment: Environment
        var reportingCurrency: CurrencyCode
        var salesCount: Int64
        var refundsCount: Int64
        var grossSales: Int64
        var refunds: Int64
        var net: Int64
        var tax: Int64
        var commissionEstimate: Int64
    }

    var from: String
    var to: String
    var by: String
    var unit = "milli-units (1/1000) of the reporting currency; *Pricing fields: of the pricing currency"
    var commissionNote = "commissionEstimate is an estimate under the configured commission regimes"
    var regimes: [String]
    /// Each regime in force with its source and confidence: what the estimates rest on.
    var regimeSources: [CommissionBasis]
    var rows: [Row]
    var totals: [Total]

    /// The report of the UTC days `[firstDay, lastDay]` from their roll-up rows.
    init(days: [MoneyDay], firstDay: Int64, lastDay: Int64, by period: Period, regimes: [CommissionRegime]) {
        from = UTCDate.text(days: firstDay)
        to = UTCDate.text(days: lastDay)
        by = period.rawValue
        self.regimes = regimes.map(\.id)
        regimeSources = CommissionBasis.of(regimes)
        var rows: [Row] = []
        var index: [String: Int] = [:]
        for day in days {
            let label = period == .day ? UTCDate.text(days: day.day) : UTCDate.monthText(days: day.day)
            let key = [
                label, day.bundleId.rawValue, day.environment.rawValue, day.provider.rawValue, day.productId.rawValue,
                day.taxCountry.rawValue, day.pricingCurrency.rawValue, day.reportingCurrency.rawValue,
            ].joined(separator: "\u{0}")
            let position =
                index[key]
                ?? {
                    rows.append(Self.empty(label, day))
                    index[key] = rows.count - 1
                    return rows.count - 1
                }()
            Self.add(day, to: &rows[position])
        }
        // Every day or month, then its keys, in the order the roll-up sorts them.
        self.rows = rows.filter { $0.salesCount != 0 || $0.refundsCount != 0 || $0.commissionEstimate != 0 }
        totals = Self.totals(of: self.rows)
    }

    private static func empty(_ label: String, _ day: MoneyDay) -> Row {
        Row(
            period: label,
            bundleId: day.bundleId,
            environment: day.environment,
            provider: day.provider,
            productId: day.productId,
            taxCountry: day.taxCountry,
            pricingCurrency: day.pricingCurrency,
            reportingCurrency: day.reportingCurrency,
            salesCount: 0,
            refundsCount: 0,
            grossSales: 0,
            refunds: 0,
            net: 0,
            tax: 0,
            grossSalesPricing: 0,
            refundsPricing: 0,
            netPricing: 0,
            commissionEstimate: 0,
            commissionableLineItems: 0
        )
    }

    private static func add(_ day: MoneyDay, to row: inout Row) {
        row.salesCount.add(saturating: day.sales)
        row.refundsCount.add(saturating: day.refunds)
        row.grossSales.add(saturating: day.salesAmount)
        row.refunds.add(saturating: day.refundsAmount)
        row.net.add(saturating: day.netAmount)
        row.tax.add(saturating: day.netTax)
        row.grossSalesPricing.add(saturating: day.salesPricing)
        row.refundsPricing.add(saturating: day.refundsPricing)
        row.netPricing.add(saturating: day.netPricing)
        row.commissionEstimate.add(saturating: day.commission)
        row.commissionableLineItems.add(saturating: day.commissionable)
    }

    private static func totals(of rows: [Row]) -> [Total] {
        var totals: [String: Total] = [:]
        for row in rows {
            let key = row.environment.rawValue + " " + row.reportingCurrency.rawValue
            var total =
                totals[key]
                ?? Total(
                    environment: row.environment,
                    reportingCurrency: row.reportingCurrency,
                    salesCount: 0,
                    refundsCount: 0,
                    grossSales: 0,
                    refunds: 0,
                    net: 0,
                    tax: 0,
                    commissionEstimate: 0
                )
            total.salesCount.add(saturating: row.salesCount)
            total.refundsCount.add(saturating: row.refundsCount)
            total.grossSales.add(saturating: row.grossSales)
            total.refunds.add(saturating: row.refunds)
            total.net.add(saturating: row.net)
            total.tax.add(saturating: row.tax)
            total.commissionEstimate.add(saturating: row.commissionEstimate)
            totals[key] = total
        }
        return totals.keys.sorted().compactMap { totals[$0] }
    }

    static let csvHeader = [
        "period", "bundle_id", "environment", "provider", "product_id", "tax_country", "pricing_currency",
        "reporting_currency", "sales_count", "refunds_count", "gross_sales_milli", "refunds_milli", "net_milli",
        "tax_milli", "gross_sales_pricing_milli", "refunds_pricing_milli", "net_pricing_milli",
        "commission_estimate_milli", "commissionable_line_items",
    ]

    /// The rows as CSV, amounts in milli-units as integers.
    var csv: String {
        var out = Self.csvHeader.joined(separator: ",") + "\r\n"
        for row in rows {
            let fields: [String] = [
                row.period, row.bundleId.rawValue, row.environment.rawValue, row.provider.rawValue,
                row.productId.rawValue, row.taxCountry.rawValue,
                row.pricingCurrency.rawValue, row.reportingCurrency.rawValue, String(row.salesCount),
                String(row.refundsCount),
                String(row.grossSales), String(row.refunds), String(row.net), String(row.tax),
                String(row.grossSalesPricing), String(row.refundsPricing), String(row.netPricing),
                String(row.commissionEstimate), String(row.commissionableLineItems),
            ]
            out += fields.map(LedgerCSV.quote).joined(separator: ",") + "\r\n"
        }
        return out
    }
}
