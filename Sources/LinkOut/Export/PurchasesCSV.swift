import Domain
package import Storage

/// The CSV form of the purchases (RFC 4180 quoting as in `LedgerCSV`), for the CLI export and the admin API.
package enum PurchasesCSV {
    static let header = [
        "purchaseId", "provider", "externalPurchaseId", "bundleId", "productId", "kind", "status", "currency",
        "amountTotal", "amountTax", "taxCountry", "subscriptionId", "buyLineItemId", "periodEnd", "createdAt",
    ]

    package static func render(_ rows: [PurchaseRecord]) -> String {
        var lines = [header.joined(separator: ",")]
        for row in rows {
            let fields: [String] = [
                row.purchaseId, row.provider.rawValue, row.externalPurchaseId?.rawValue ?? "",
                row.bundleId?.rawValue ?? "",
                row.productId?.rawValue ?? "",
                row.kind.rawValue, row.status.rawValue, row.currency.rawValue, String(row.amountTotal),
                String(row.amountTax),
                row.taxCountry.rawValue, row.subscriptionId ?? "", row.buyLineItemId?.rawValue ?? "",
                row.periodEnd.map(String.init) ?? "",
                String(row.createdAt),
            ]
            lines.append(fields.map(LedgerCSV.quote).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
