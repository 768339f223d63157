import Domain
package import Storage

/// A quick fill for the growth benchmark (`bench/growth.sh`): landings whose `NO_LINE_ITEM` report Apple accepted
/// long ago, the shape most of a year-old ledger has, written as a landing and its report would write them (a
/// token, its checkout, its visit, its report, and the roll-ups' counts), in large transactions of many-row
/// statements.
extension Ledger {
    /// One batch of the fill: `count` landings numbered from `first`, the `index`-th first seen at
    /// `start + index * spacing`, each with an accepted report queued two days after.
    package func seedReportedLandings(first: Int, count: Int, start: Int64, spacing: Int64) throws(StorageError) {
        var statements: [(sql: String, parameters: [SQLValue])] = []
        var days: [Int64: Int64] = [:]
        var index = first
        while index < first + count {
            let rows = min(Self.seedRowsPerStatement, first + count - index)
            statements += Self.seedStatements(from: index, rows: rows, start: start, spacing: spacing)
            for row in index..<(index + rows) {
                days[(start + Int64(row) * spacing) / Milliseconds.day, default: 0] += 1
            }
            index += rows
        }
        for (day, tokens) in days {
            statements.append(
                (
                    """
                    INSERT INTO token_days (day, environment, source, tokens, reported)
                    VALUES (?, 'production', 'url', ?, ?)
                    ON CONFLICT (day, environment, source) DO UPDATE SET tokens = token_days.tokens + excluded.tokens,
                        reported = token_days.reported + excluded.reported
                    """,
                    [.integer(day), .integer(tokens), .integer(tokens)]
                )
            )
        }
        statements.append(
            ("UPDATE ledger_counts SET n = n + ? WHERE name = 'reports'", [.integer(Int64(count))])
        )
        try writeInOneTransaction(statements)
    }

    static let seedRowsPerStatement = 200

    /// After a fill on PostgreSQL, the statistics its autovacuum would gather within a minute of such growth, so
    /// the benchmark measures the plans a running server has rather than those of tables the planner has never
    /// seen. SQLite gathers none (the server never runs `ANALYZE` there), so nothing is done on it.
    package func analyzeAfterSeeding() throws(StorageError) {
        guard isOnPostgres else { return }
        try writeInOneTransaction([("ANALYZE", [])])
    }

    /// The externalPurchaseId of the `index`-th seeded landing (in order, so inserts append to the indexes).
    package static func seedId(_ index: Int) -> String {
        let digits = String(index)
        return "seed-" + String(repeating: "0", count: max(0, 10 - digits.count)) + digits
    }

    /// The four many-row inserts of landings `first..<first + rows`: tokens, checkouts, visits and reports.
    private static func seedStatements(
        from first: Int,
        rows: Int,
        start: Int64,
        spacing: Int64
    ) -> [(sql: String, parameters: [SQLValue])] {
        var tokens: [SQLValue] = []
        var checkouts: [SQLValue] = []
        var visits: [SQLValue] = []
        var reports: [SQLValue] = []
        for index in first..<(first + rows) {
            let id = seedId(index)
            let seen = start + Int64(index) * spacing
            let created = seen - 5_000
            let reported = seen + Milliseconds.days(2)
            let checkout = "chk-" + id
            tokens += [
                .text(id), .text(checkout), .integer(created), .integer(seen), .integer(seen), .integer(reported),
                .integer(reported),
            ]
            checkouts += [.text(checkout), .text(id), .integer(seen)]
            visits += [.text(checkout), .text(id), .integer(seen)]
            reports += [
                .text("req-" + id), .text(id),
                .text(
                    "{\"externalPurchaseId\":\"\(id)\",\"requestIdentifier\":\"req-\(id)\",\"status\":\"NO_LINE_ITEM\"}"
                ),
                .integer(reported), .integer(reported), .integer(reported), .integer(reported),
            ]
        }
        func values(_ pattern: String) -> String { Array(repeating: pattern, count: rows).joined(separator: ", ") }
        return [
            (
                """
                INSERT INTO tokens (external_purchase_id, checkout_id, raw_token, app_apple_id, bundle_id, token_type,
                    token_created_at, token_expires_at, environment, source, app_account_token, first_seen_at,
                    last_seen_at, visit_count, report_queued_at, accepted_at)
                VALUES \(values("(?, ?, '', 1234567890, 'com.example', NULL, ?, NULL, 'production', 'url', NULL, ?, ?, 1, ?, ?)"))
                """,
                tokens
            ),
            (
                "INSERT INTO checkouts (id, external_purchase_id, bundle_id, created_at) VALUES \(values("(?, ?, 'com.example', ?)"))",
                checkouts
            ),
            (
                """
                INSERT INTO visits (checkout_id, external_purchase_id, visited_at, landing_path, had_token, recorded_token)
                VALUES \(values("(?, ?, ?, '/', 1, 1)"))
                """,
                visits
            ),
            (
                """
                INSERT INTO reports (request_identifier, external_purchase_id, environment, bundle_id, status, body,
                    state, attempts, next_attempt_at, created_at, last_attempt_at, last_http_status, accepted_at)
                VALUES \(values("(?, ?, 'production', 'com.example', 'NO_LINE_ITEM', ?, 'accepted', 1, ?, ?, ?, 200, ?)"))
                """,
                reports
            ),
        ]
    }
}
