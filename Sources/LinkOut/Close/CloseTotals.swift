package import Domain
import ExternalPurchase
import Foundation
import Storage

/// The money of a closed month, per reporting currency, in milli-units (Apple's unit, spec §5.5; never floating
/// point): sales and refunds tax included, the tax in them, and the net excluding tax. The commission is an
/// estimate (`commissionEstimate`, nil while no commission regime applies).
package struct CloseTotals: Sendable, Encodable, Equatable {
    package struct Currency: Sendable, Encodable, Equatable {
        package var reportingCurrency: String
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

/// Where the close reads a month's money from: a seam, so the totals can come from a structured store of line
/// items (with its commission estimate) instead of Apple's JSON of each line item.
package protocol CloseTotalsSource: Sendable {
    func totals(month: CloseMonth, environment: Environment) throws -> CloseTotals
}

/// The month's totals from the JSON of its line items (the latest version of each; one withdrawn with
/// `erroneouslySubmitted` counts nothing). Reads the month's line items once, through `line_items_close`.
package struct LineItemBodyTotals: CloseTotalsSource {
    let ledger: Ledger

    package func totals(month: CloseMonth, environment: Environment) throws -> CloseTotals {
        let bodies = try ledger.monthlyClose.lineItemBodies(
            environment: environment,
            from: month.start,
            until: month.end
        )
        return Self.sum(bodies)
    }

    /// Pure: the totals of line item bodies, a later version of an id replacing an earlier one.
    static func sum(_ bodies: [String]) -> CloseTotals {
        let decoder = JSONDecoder()
        var latest: [String: LineItem] = [:]
        var order: [String] = []
        for body in bodies {
            guard let item = try? decoder.decode(LineItem.self, from: Data(body.utf8)) else { continue }
            let id = item.common.lineItemId
            if latest.updateValue(item, forKey: id) == nil { order.append(id) }
        }
        var byCurrency: [String: CloseTotals.Currency] = [:]
        for id in order {
            guard let item = latest[id], item.common.erroneouslySubmitted != true else { continue }
            let amounts = item.common
            var currency = byCurrency[amounts.reportingCurrency] ?? .init(reportingCurrency: amounts.reportingCurrency)
            if item.isBuy {
                currency.sales += amounts.amountTaxInclusive
                currency.tax += amounts.taxAmount
                currency.netTaxExclusive += amounts.amountTaxExclusive
            } else {
                currency.refunds += amounts.amountTaxInclusive
                currency.tax -= amounts.taxAmount
                currency.netTaxExclusive -= amounts.amountTaxExclusive
            }
            byCurrency[amounts.reportingCurrency] = currency
        }
        return CloseTotals(
            currencies: byCurrency.keys.sorted().compactMap { byCurrency[$0] },
            commissionEstimate: nil,
            source: "line items as reported to Apple; no commission regime is configured, so no estimate"
        )
    }
}
