import Domain
package import Storage

/// The reconciliation export: one row per line item as Apple sees it now (its latest version), so an invoice
/// from Apple can be checked line by line. The token is its `externalPurchaseId`, never the raw token. Amounts are
/// integer milli-units; the commission is an estimate.
package enum LineItemsCSV {
    static let header = [
        "externalPurchaseId", "environment", "bundleId", "lineItemId", "creationDate", "creationDay", "eventType",
        "productId", "productType", "subscriptionEvent", "quantity", "referenceLineItemId", "amountTaxInclusive",
        "amountTaxExclusive", "taxAmount", "netAmountTaxExclusive", "reportingCurrency", "pricingCurrency",
        "pricingAmount", "pricingAmountSource", "exchangeRate", "taxCountry", "provider", "retracted", "held",
        "reportRequestIdentifier", "reportState", "acceptedAt", "regime", "tapAt", "daysFromTap", "commissionable",
        "commissionBasisPoints", "commissionEstimate",
    ]

    package static var headerLine: String { header.joined(separator: ",") + "\r\n" }

    package static func render(_ items: [MoneyLineItem]) -> String {
        var out = ""
        for item in items {
            let c = item.classification
            let fields: [String] = [
                item.externalPurchaseId.rawValue, item.environment.rawValue, item.bundleId.rawValue,
                item.lineItemId.rawValue,
                String(item.creationDate), UTCDate.text(days: item.creationDate / Milliseconds.day), item.eventType,
                item.productId.rawValue, item.productType, item.subscriptionEvent ?? "",
                item.quantity.map(String.init) ?? "",
                item.referenceLineItemId?.rawValue ?? "", String(item.amountTaxInclusive),
                String(item.amountTaxExclusive),
                String(item.taxAmount), String(item.netAmountTaxExclusive), item.reportingCurrency.rawValue,
                item.pricingCurrency.rawValue, String(item.pricingAmount), item.pricingAmountSource.rawValue,
                item.exchangeRate ?? "", item.taxCountry.rawValue, item.provider.rawValue,
                item.retracted ? "true" : "false",
                item.held ? "true" : "false", item.reportRequestIdentifier?.rawValue ?? "",
                item.reportState?.rawValue ?? "",
                item.acceptedAt.map(String.init) ?? "", c.regimeId ?? "", c.tapAt.map(String.init) ?? "",
                c.daysFromTap.map(String.init) ?? "", c.commissionable && c.regimeId != nil ? "true" : "false",
                String(c.basisPoints), String(c.commission),
            ]
            out += fields.map(LedgerCSV.quote).joined(separator: ",") + "\r\n"
        }
        return out
    }

    /// Every line item dated in `[from, until)`, page by page (keyset), as CSV with its header, handed to
    /// `write` a page at a time so millions of rows never sit in memory at once.
    package static func export(
        _ ledger: Ledger,
        from: Int64 = Int64.min,
        until: Int64 = Int64.max,
        pageSize: Int = 5_000,
        write: (String) -> Void
    ) throws(StorageError) {
        write(headerLine)
        var last: MoneyLineItem?
        while true {
            let page = try ledger.money.lineItems(from: from, until: until, after: last, limit: pageSize)
            if !page.isEmpty { write(render(page)) }
            guard page.count == pageSize else { return }
            last = page.last
        }
    }
}
