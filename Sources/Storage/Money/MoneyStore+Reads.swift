public import Domain

/// What the money view offers its readers: revenue pages and the API read the roll-up; the monthly close and the
/// reconciliation export read line items by date, with their report and Apple's acceptance.
extension MoneyStore {
    /// Line items dated in `[from, until)` (UNIX ms, `creationDate`), in date order, after `after` (keyset
    /// paging: pass the last item of the previous page). Retracted items are included, flagged.
    public func lineItems(from: Int64, until: Int64, after: MoneyLineItem? = nil, limit: Int)
        throws(StorageError) -> [MoneyLineItem]
    {
        try database.readers.read { connection throws(StorageError) in
            // The next page starts at the last one's date (an index seek), past the rows of that date already
            // given.
            let (keyset, keys): (String, [SQLValue]) =
                if let after {
                    (
                        "AND (creation_date, environment, bundle_id, line_item_id) > (?, ?, ?, ?)",
                        [
                            .integer(after.creationDate), .text(after.environment.rawValue), .id(after.bundleId),
                            .id(after.lineItemId),
                        ]
                    )
                } else { ("", []) }
            let start = max(from, after?.creationDate ?? from)
            return try connection.query(
                """
                SELECT \(Self.columns) FROM money_line_items WHERE creation_date >= ? AND creation_date < ? \(keyset)
                ORDER BY creation_date, environment, bundle_id, line_item_id LIMIT ?
                """,
                [.integer(start), .integer(until)] + keys + [.integer(Int64(limit))]
            ).decoded(Self.moneyLineItem)
        }
    }

    /// One line item as Apple sees it now, or nil when none counts (unknown, or only refused versions).
    public func lineItem(_ lineItemId: LineItemID, bundleId: BundleID, environment: Environment) throws(StorageError)
        -> MoneyLineItem?
    {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.columns) FROM money_line_items
                WHERE environment = ? AND bundle_id = ? AND line_item_id = ?
                """,
                [.text(environment.rawValue), .id(bundleId), .id(lineItemId)]
            ).firstDecoded(Self.moneyLineItem)
        }
    }

    /// Roll-up rows of the UTC days `[fromDay, untilDay)` (days since 1970-01-01), ordered by day and key.
    public func days(fromDay: Int64, untilDay: Int64) throws(StorageError) -> [MoneyDay] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT \(Self.dayKeyColumns.joined(separator: ", ")), \(Self.dayAmountColumns.joined(separator: ", "))
                FROM money_daily WHERE day >= ? AND day < ?
                ORDER BY \(Self.dayKeyColumns.joined(separator: ", "))
                """,
                [.integer(fromDay), .integer(untilDay)]
            ).decoded(Self.moneyDay)
        }
    }

    /// Totals of the UTC days `[fromDay, untilDay)` per app, environment, provider, product, tax country and
    /// currencies (`day` is `fromDay` in each): a month's totals are `totals(fromDay: first, untilDay: next)`.
    public func totals(fromDay: Int64, untilDay: Int64) throws(StorageError) -> [MoneyDay] {
        try database.readers.read { connection throws(StorageError) in
            let keys = Self.dayKeyColumns.dropFirst().joined(separator: ", ")
            let sums = Self.dayAmountColumns.map { "sum(\($0))" }.joined(separator: ", ")
            return try connection.query(
                """
                SELECT ?, \(keys), \(sums) FROM money_daily WHERE day >= ? AND day < ?
                GROUP BY \(keys) ORDER BY \(keys)
                """,
                [.integer(fromDay), .integer(fromDay), .integer(untilDay)]
            ).decoded(Self.moneyDay)
        }
    }

    /// Line items dated in `[from, until)` by acceptance: all that count (not retracted), and of those how many
    /// a report Apple accepted carries. For the monthly close.
    public func acceptance(from: Int64, until: Int64) throws(StorageError) -> (lineItems: Int64, accepted: Int64) {
        try database.readers.read { connection throws(StorageError) in
            let row = try connection.query(
                """
                SELECT count(*), count(accepted_at) FROM money_line_items
                WHERE creation_date >= ? AND creation_date < ? AND retracted = 0
                """,
                [.integer(from), .integer(until)]
            ).first
            return (row?[0].integer ?? 0, row?[1].integer ?? 0)
        }
    }
}
