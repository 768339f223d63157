import Domain
import Foundation

/// The writes behind `MoneyRows`: a money row, its share of the daily roll-up, the report and acceptance of rows
/// when reports change, and the rebuild of both tables from `line_items`.
extension MoneyRows {
    static func upsert(_ item: MoneyLineItem, in connection: any SQLConnection) throws(StorageError) {
        let values = MoneyStore.values(item)
        let placeholders = values.map { _ in "?" }.joined(separator: ", ")
        let updates = MoneyStore.columns.split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        .dropFirst(3).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        try connection.query(
            """
            INSERT INTO money_line_items (\(MoneyStore.columns)) VALUES (\(placeholders))
            ON CONFLICT(environment, bundle_id, line_item_id) DO UPDATE SET \(updates)
            """,
            values
        )
    }

    /// Adds (`sign` 1) or takes away (-1) the item's share of its day. Retracted items have none.
    static func addToDay(_ item: MoneyLineItem, sign: Int64, in connection: any SQLConnection) throws(StorageError) {
        guard !item.retracted else { return }
        let buy: Int64 = item.isRefund ? 0 : 1
        let refund: Int64 = 1 - buy
        let commissionable: Int64 = item.classification.commissionable && item.classification.regimeId != nil ? 1 : 0
        let deltas: [Int64] = [
            sign * buy, sign * buy * item.amountTaxInclusive, sign * buy * item.taxAmount,
            sign * buy * item.pricingAmount, sign * refund, sign * refund * item.amountTaxInclusive,
            sign * refund * item.taxAmount, sign * refund * item.pricingAmount,
            sign * item.classification.commission, sign * commissionable,
        ]
        let keys: [SQLValue] = [
            .integer(item.creationDate / Milliseconds.day), .id(item.bundleId), .text(item.environment.rawValue),
            .id(item.provider), .id(item.productId), .id(item.taxCountry), .id(item.pricingCurrency),
            .id(item.reportingCurrency),
        ]
        let sums = MoneyStore.dayAmountColumns.map { "\($0) = money_daily.\($0) + excluded.\($0)" }
        try connection.query(
            """
            INSERT INTO money_daily (\(MoneyStore.dayKeyColumns.joined(separator: ", ")),
                \(MoneyStore.dayAmountColumns.joined(separator: ", ")))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(\(MoneyStore.dayKeyColumns.joined(separator: ", "))) DO UPDATE SET
                \(sums.joined(separator: ", "))
            """,
            keys + deltas.map(SQLValue.integer)
        )
    }

    /// The line items (rows of `line_items`) a new or revised report carries now point at it.
    static func claimed(rows: [Int64], by requestIdentifier: RequestIdentifier, in connection: any SQLConnection)
        throws(StorageError)
    {
        for row in rows {
            try connection.query(
                """
                UPDATE money_line_items SET report_request_identifier = ?, held = 0,
                    report_state = (SELECT state FROM reports WHERE request_identifier = ?),
                    accepted_at = (SELECT accepted_at FROM reports WHERE request_identifier = ?)
                WHERE line_item_row = ?
                """,
                [.id(requestIdentifier), .id(requestIdentifier), .id(requestIdentifier), .integer(row)]
            )
        }
    }

    /// The report's state and Apple's acceptance, copied to the money rows it carries.
    static func reportChanged(_ requestIdentifier: RequestIdentifier, in connection: any SQLConnection)
        throws(StorageError)
    {
        try connection.query(
            """
            UPDATE money_line_items SET report_state = (SELECT state FROM reports WHERE request_identifier = ?),
                accepted_at = (SELECT accepted_at FROM reports WHERE request_identifier = ?)
            WHERE report_request_identifier = ?
            """,
            [.id(requestIdentifier), .id(requestIdentifier), .id(requestIdentifier)]
        )
    }

    /// As `reportChanged`, for every report of a token.
    static func reportsChanged(forToken externalPurchaseId: ExternalPurchaseID, in connection: any SQLConnection)
        throws(StorageError)
    {
        for row in try connection.query(
            "SELECT request_identifier FROM reports WHERE external_purchase_id = ?",
            [.id(externalPurchaseId)]
        ) {
            if let id = row[0].id(RequestIdentifier.self) { try reportChanged(id, in: connection) }
        }
    }

    /// Recomputes every line item of a report (the versions it carried were set aside, or replaced).
    static func refreshReport(
        _ requestIdentifier: RequestIdentifier,
        in connection: any SQLConnection,
        dialect: SQLDialect,
        regimes: [CommissionRegime]
    ) throws(StorageError) {
        let items = try connection.query(
            "SELECT DISTINCT line_item_id, external_purchase_id FROM line_items WHERE report_request_identifier = ?",
            [.id(requestIdentifier)]
        )
        for item in items {
            try refresh(
                lineItemId: item[0].id() ?? "",
                externalPurchaseId: item[1].id() ?? "",
                in: connection,
                dialect: dialect,
                regimes: regimes
            )
        }
        try reportChanged(requestIdentifier, in: connection)
    }

    /// Builds both tables again from `line_items` under `regimes` (after the migration that made them, and when
    /// the operator changes the regimes), and records the regimes' fingerprint. Items go in the order their first
    /// version arrived, which puts a buy before its refunds unless one batch listed the refund first; then the
    /// buy's refresh refreshes its refunds again (`refresh`), so every refund ends classified from its buy.
    static func rebuild(in connection: any SQLConnection, dialect: SQLDialect, regimes: [CommissionRegime])
        throws(StorageError)
    {
        if dialect == .postgres {
            // Writers of single items wait until the rebuild is done (it holds no per-item locks).
            try connection.execute("LOCK TABLE money_line_items, money_daily IN EXCLUSIVE MODE")
        }
        try connection.execute("DELETE FROM money_daily; DELETE FROM money_line_items")
        let items = try connection.query(
            """
            SELECT line_item_id, external_purchase_id, min(id) FROM line_items
            GROUP BY line_item_id, external_purchase_id ORDER BY 3
            """
        )
        for item in items {
            try refresh(
                lineItemId: item[0].id() ?? "",
                externalPurchaseId: item[1].id() ?? "",
                in: connection,
                dialect: dialect,
                regimes: regimes,
                serialize: false
            )
        }
        try connection.query(
            """
            INSERT INTO settings (name, value) VALUES ('money_regimes', ?)
            ON CONFLICT(name) DO UPDATE SET value = excluded.value
            """,
            [.text(CommissionRegime.fingerprint(regimes))]
        )
    }
}

extension MoneyRows {
    /// Apple's signed copy of a token (from an App Store Server Notification) replaced what a landing recorded: its
    /// line items are classified again from the corrected `tokenCreationDate`, and rows kept under the app it named
    /// before move to Apple's.
    static func tokenCorrected(
        _ externalPurchaseId: ExternalPurchaseID,
        formerBundleId: BundleID?,
        in connection: any SQLConnection,
        dialect: SQLDialect,
        regimes: [CommissionRegime]
    ) throws(StorageError) {
        let items = try connection.query(
            "SELECT DISTINCT line_item_id FROM line_items WHERE external_purchase_id = ?",
            [.id(externalPurchaseId)]
        ).compactMap { $0[0].id(LineItemID.self) }
        // Apple does not change a token's environment; with it the former rows are found by primary key, not by
        // reading every money row.
        let environment = try connection.query(
            "SELECT environment FROM tokens WHERE external_purchase_id = ?",
            [.id(externalPurchaseId)]
        ).first?[0].text
        for lineItemId in items {
            if let formerBundleId, let environment {
                let former = try connection.query(
                    """
                    SELECT \(MoneyStore.columns) FROM money_line_items
                    WHERE environment = ? AND bundle_id = ? AND line_item_id = ? AND external_purchase_id = ?
                    """,
                    [.text(environment), .id(formerBundleId), .id(lineItemId), .id(externalPurchaseId)]
                ).decoded(MoneyStore.moneyLineItem)
                for row in former {
                    try addToDay(row, sign: -1, in: connection)
                    try connection.query(
                        "DELETE FROM money_line_items WHERE environment = ? AND bundle_id = ? AND line_item_id = ?",
                        [.text(row.environment.rawValue), .id(row.bundleId), .id(row.lineItemId)]
                    )
                }
            }
            try refresh(
                lineItemId: lineItemId,
                externalPurchaseId: externalPurchaseId,
                in: connection,
                dialect: dialect,
                regimes: regimes
            )
        }
    }
}
