package import Domain
import Storage

/// The money of a closed month, per reporting currency, in milli-units (Apple's unit, Apple: "Line item fields"; never
/// floating point): sales and refunds tax included, the tax in them, and the net excluding tax. The commission is an
/// estimate (`commissionEstimate`, nil while no commission regime applies).
package struct CloseTotals: Sendable, Encodable, Equatable {
    package struct Currency: Sendable, Encodable, Equatable {
        package var reportingCurrency: CurrencyCode
        package var sales: Int64 = 0
        package var refunds: Int64 = 0
        package var tax: Int64 = 0
        /// Sales less refunds, tax excluded.
        package var netTaxExclusive: Int64 = 0
    }

    package var currencies: [Currency]
    /// Apple's commission, estimated per reporting currency in milli-units; nil when none is known.
    package var commissionEstimate: [String: Int64]?
    /// Where the figures come from, for the reader.
    package var source: String
}

/// The month's totals from the money roll-up (`money_daily`, one row per day and key: a month reads a few
/// thousand rows, never its line items), so the close agrees with the revenue view and the reconciliation export.
/// The commission is the roll-up's estimate, shown only while a commission regime is configured.
package struct MoneyTotals: Sendable {
    let ledger: Ledger
    let regimes: [CommissionRegime]

    package func totals(month: CloseMonth, environment: Environment) throws -> CloseTotals {
        let rows = try ledger.money.totals(
            fromDay: month.start / Milliseconds.day,
            untilDay: month.end / Milliseconds.day
        )
        return Self.sum(rows.filter { $0.environment == environment }, regimes: regimes)
    }

    /// Pure: roll-up rows summed per reporting currency; the estimate rests on `regimes` (named with their
    /// sources and confidence in `source`).
    static func sum(_ rows: [MoneyDay], regimes: [CommissionRegime]) -> CloseTotals {
        let regimesConfigured = !regimes.isEmpty
        var byCurrency: [String: CloseTotals.Currency] = [:]
        var commission: [String: Int64] = [:]
        for row in rows {
            var currency = byCurrency[row.reportingCurrency.rawValue] ?? .init(reportingCurrency: row.reportingCurrency)
            currency.sales.add(saturating: row.salesAmount)
            currency.refunds.add(saturating: row.refundsAmount)
            currency.tax.add(saturating: row.netTax)
            currency.netTaxExclusive.add(saturating: Int64.saturating(row.netAmount, minus: row.netTax))
            byCurrency[row.reportingCurrency.rawValue] = currency
            commission[row.reportingCurrency.rawValue, default: 0].add(saturating: row.commission)
        }
        return CloseTotals(
            currencies: byCurrency.keys.sorted().compactMap { byCurrency[$0] },
            commissionEstimate: regimesConfigured ? commission : nil,
            source: regimesConfigured
                ? "the line items as Apple sees them (latest versions, retractions left out); the commission is an "
                    + "estimate under commission.regimes: " + CommissionBasis.text(regimes)
                : "the line items as Apple sees them (latest versions, retractions left out); no commission regime "
                    + "is configured (commission.regimes), so no estimate"
        )
    }
}
