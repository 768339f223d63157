package import Storage

/// A bulk fill of the money tables for the money benchmark (`bench/money.sh`): rows as the write path makes them,
/// generated in SQL in large transactions (the write path costs a few lookups per line item; filling millions
/// through it would measure the fill, not the reads).
extension Ledger {
    /// Adds `count` line items (numbers `first` to `first + count - 1`) spread over the `days` UTC days from
    /// `firstDay`: 9 buys to a refund, two products, four tax countries, EUR and JPY, every one accepted. Then
    /// rebuilds the daily roll-up from the rows. The same SQL on both engines.
    package func seedMoney(first: Int64, count: Int64, firstDay: Int64, days: Int64) throws(StorageError) {
        let batch: Int64 = 100_000
        var done: Int64 = 0
        while done < count {
            let size = min(batch, count - done)
            try writeInOneTransaction([
                (Self.seedMoneySQL(start: first + done, size: size, firstDay: firstDay, days: days), [])
            ])
            done += size
        }
        let keys = MoneyStore.dayKeyColumns.joined(separator: ", ")
        try writeInOneTransaction([
            ("DELETE FROM money_daily", []),
            (
                """
                INSERT INTO money_daily (\(keys), \(MoneyStore.dayAmountColumns.joined(separator: ", ")))
                SELECT creation_date / 86400000, bundle_id, environment, provider, product_id, tax_country,
                    pricing_currency, reporting_currency,
                    sum(CASE WHEN event_type = 'BUY' THEN 1 ELSE 0 END),
                    sum(CASE WHEN event_type = 'BUY' THEN amount_tax_inclusive ELSE 0 END),
                    sum(CASE WHEN event_type = 'BUY' THEN tax_amount ELSE 0 END),
                    sum(CASE WHEN event_type = 'BUY' THEN pricing_amount ELSE 0 END),
                    sum(CASE WHEN event_type = 'REFUND' THEN 1 ELSE 0 END),
                    sum(CASE WHEN event_type = 'REFUND' THEN amount_tax_inclusive ELSE 0 END),
                    sum(CASE WHEN event_type = 'REFUND' THEN tax_amount ELSE 0 END),
                    sum(CASE WHEN event_type = 'REFUND' THEN pricing_amount ELSE 0 END),
                    sum(commission), sum(commissionable)
                FROM money_line_items WHERE retracted = 0
                GROUP BY creation_date / 86400000, bundle_id, environment, provider, product_id, tax_country,
                    pricing_currency, reporting_currency
                """,
                []
            ),
        ])
    }

    private static func seedMoneySQL(start: Int64, size: Int64, firstDay: Int64, days: Int64) -> String {
        let yen = "(n.i % 5 = 4)"
        let refund = "(n.i % 10 = 9)"
        let inclusive = "CASE WHEN \(yen) THEN 4800000 ELSE 29990 END"
        let tax = "CASE WHEN \(yen) THEN 436000 ELSE 4790 END"
        return """
            WITH RECURSIVE n(i) AS (SELECT CAST(\(start) AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i < \(start + size - 1))
            INSERT INTO money_line_items (\(MoneyStore.columns))
            SELECT 'production', 'com.example', 'bench-' || n.i, n.i, 'bench-token-' || (n.i / 2),
                (\(firstDay) + n.i % \(days)) * 86400000 + (n.i * 7919) % 86400000,
                CASE WHEN \(refund) THEN 'REFUND' ELSE 'BUY' END,
                CASE WHEN n.i % 3 = 0 THEN 'pro.monthly' ELSE 'pro.lifetime' END,
                CASE WHEN n.i % 3 = 0 THEN 'SUBSCRIPTION' ELSE 'ONE_TIME_BUY' END, NULL,
                CASE WHEN \(refund) THEN NULL ELSE 1 END,
                CASE WHEN \(refund) THEN 'bench-' || (n.i - 1) ELSE NULL END,
                \(inclusive), \(inclusive) - \(tax), \(tax), \(inclusive) - \(tax),
                CASE WHEN \(yen) THEN 'JPY' ELSE 'EUR' END, CASE WHEN \(yen) THEN 'JPY' ELSE 'EUR' END,
                \(inclusive), 'reported', NULL,
                CASE WHEN \(yen) THEN 'JPN' WHEN n.i % 5 = 1 THEN 'FRA' WHEN n.i % 5 = 2 THEN 'ESP' ELSE 'DEU' END,
                'stripe', 0, 0, 'bench-report-' || (n.i / 2), 'accepted',
                (\(firstDay) + n.i % \(days)) * 86400000 + 3600000, 'eu-2026-10', NULL, 0, 1, 2000,
                CASE WHEN \(refund) THEN -1 ELSE 1 END * ((\(inclusive) - \(tax)) * CAST(2000 AS BIGINT) + 5000) / 10000
            FROM n
            """
    }
}
