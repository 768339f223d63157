import Domain

/// The money view of the ledger (`ledger.money`): every line item as Apple sees it now (`MoneyLineItem`, one row
/// per line item, kept in the transactions that store, restate, report and accept line items) and the daily
/// roll-up (`MoneyDay`). Revenue over any span reads the roll-up; the monthly close and the reconciliation export
/// read the rows, by date.
public struct MoneyStore: Sendable {
    let database: SQLDatabase

    /// The money row's columns in the order `values` binds them (the benchmarks' bulk fill writes them too).
    package static let columns = """
        environment, bundle_id, line_item_id, line_item_row, external_purchase_id, creation_date, event_type,
        product_id, product_type, subscription_event, quantity, reference_line_item_id, amount_tax_inclusive,
        amount_tax_exclusive, tax_amount, net_amount_tax_exclusive, reporting_currency, pricing_currency,
        pricing_amount, pricing_amount_source, exchange_rate, tax_country, provider, retracted, held,
        report_request_identifier, report_state, accepted_at, regime_id, tap_at, days_from_tap, commissionable,
        commission_basis_points, commission
        """

    /// The daily roll-up's key and amounts (the benchmarks' bulk fill rebuilds it from the rows).
    package static let dayKeyColumns = [
        "day", "bundle_id", "environment", "provider", "product_id", "tax_country", "pricing_currency",
        "reporting_currency",
    ]
    package static let dayAmountColumns = [
        "sales", "sales_amount", "sales_tax", "sales_pricing", "refunds", "refunds_amount", "refunds_tax",
        "refunds_pricing", "commission", "commissionable",
    ]

    static func values(_ item: MoneyLineItem) -> [SQLValue] {
        let c = item.classification
        return [
            .text(item.environment.rawValue), .id(item.bundleId), .id(item.lineItemId), .integer(item.lineItemRow),
            .id(item.externalPurchaseId), .integer(item.creationDate), .text(item.eventType), .id(item.productId),
            .text(item.productType), .optional(item.subscriptionEvent), .optional(item.quantity),
            .optional(item.referenceLineItemId), .integer(item.amountTaxInclusive), .integer(item.amountTaxExclusive),
            .integer(item.taxAmount), .integer(item.netAmountTaxExclusive), .id(item.reportingCurrency),
            .id(item.pricingCurrency), .integer(item.pricingAmount), .text(item.pricingAmountSource.rawValue),
            .optional(item.exchangeRate), .id(item.taxCountry), .id(item.provider),
            .integer(item.retracted ? 1 : 0),
            .integer(item.held ? 1 : 0), .optional(item.reportRequestIdentifier), .optional(item.reportState?.rawValue),
            .optional(item.acceptedAt), .optional(c.regimeId), .optional(c.tapAt), .optional(c.daysFromTap),
            .integer(c.commissionable ? 1 : 0), .integer(c.basisPoints), .integer(c.commission),
        ]
    }

    static func moneyLineItem(_ row: [SQLValue]) throws(StorageError) -> MoneyLineItem {
        MoneyLineItem(
            environment: try row[0].closedSet("money_line_items.environment"),
            bundleId: row[1].id() ?? "",
            lineItemId: row[2].id() ?? "",
            lineItemRow: row[3].integer ?? 0,
            externalPurchaseId: row[4].id() ?? "",
            creationDate: row[5].integer ?? 0,
            eventType: row[6].text ?? "",
            productId: row[7].id() ?? "",
            productType: row[8].text ?? "",
            subscriptionEvent: row[9].text,
            quantity: row[10].integer,
            referenceLineItemId: row[11].id(),
            amountTaxInclusive: row[12].integer ?? 0,
            amountTaxExclusive: row[13].integer ?? 0,
            taxAmount: row[14].integer ?? 0,
            netAmountTaxExclusive: row[15].integer ?? 0,
            reportingCurrency: row[16].id() ?? "",
            pricingCurrency: row[17].id() ?? "",
            pricingAmount: row[18].integer ?? 0,
            pricingAmountSource: try row[19].closedSet("money_line_items.pricing_amount_source"),
            exchangeRate: row[20].text,
            taxCountry: row[21].id() ?? "",
            provider: row[22].id() ?? "",
            retracted: row[23].integer == 1,
            held: row[24].integer == 1,
            reportRequestIdentifier: row[25].id(),
            reportState: try row[26].closedSetIfPresent("money_line_items.report_state"),
            acceptedAt: row[27].integer,
            classification: CommissionClassification(
                regimeId: row[28].text,
                tapAt: row[29].integer,
                daysFromTap: row[30].integer,
                commissionable: row[31].integer == 1,
                basisPoints: row[32].integer ?? 0,
                commission: row[33].integer ?? 0
            )
        )
    }

    static func moneyDay(_ row: [SQLValue]) throws(StorageError) -> MoneyDay {
        MoneyDay(
            day: row[0].integer ?? 0,
            bundleId: row[1].id() ?? "",
            environment: try row[2].closedSet("money_daily.environment"),
            provider: row[3].id() ?? "",
            productId: row[4].id() ?? "",
            taxCountry: row[5].id() ?? "",
            pricingCurrency: row[6].id() ?? "",
            reportingCurrency: row[7].id() ?? "",
            sales: row[8].integer ?? 0,
            salesAmount: row[9].integer ?? 0,
            salesTax: row[10].integer ?? 0,
            salesPricing: row[11].integer ?? 0,
            refunds: row[12].integer ?? 0,
            refundsAmount: row[13].integer ?? 0,
            refundsTax: row[14].integer ?? 0,
            refundsPricing: row[15].integer ?? 0,
            commission: row[16].integer ?? 0,
            commissionable: row[17].integer ?? 0
        )
    }
}
