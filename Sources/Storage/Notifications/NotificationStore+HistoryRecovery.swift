import Domain

extension NotificationStore {
    /// Every recorded window's progress, oldest window first.
    public func historyCheckpoints() throws(StorageError) -> [HistoryCheckpoint] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                """
                SELECT bundle_id, environment, start_date, end_date, pagination_token, pages, fetched, updated_at
                FROM history_recovery ORDER BY start_date, end_date, bundle_id, environment
                """
            ).decoded { row throws(StorageError) in
                HistoryCheckpoint(
                    bundleId: row[0].id() ?? "",
                    environment: try row[1].closedSet("history_recovery.environment"),
                    startDate: row[2].integer ?? 0,
                    endDate: row[3].integer ?? 0,
                    paginationToken: row[4].text,
                    pages: row[5].integer ?? 0,
                    fetched: row[6].integer ?? 0,
                    updatedAt: row[7].integer ?? 0
                )
            }
        }
    }

    /// Records how far one app and environment got (insert or replace). Returns once committed.
    public func saveHistoryCheckpoint(_ checkpoint: HistoryCheckpoint) throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
            try connection.query(
                """
                INSERT INTO history_recovery (bundle_id, environment, start_date, end_date, pagination_token, pages,
                    fetched, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(bundle_id, environment, start_date, end_date) DO UPDATE SET
                    pagination_token = excluded.pagination_token, pages = excluded.pages,
                    fetched = excluded.fetched, updated_at = excluded.updated_at
                """,
                [
                    .id(checkpoint.bundleId), .text(checkpoint.environment.rawValue), .integer(checkpoint.startDate),
                    .integer(checkpoint.endDate), .optional(checkpoint.paginationToken),
                    .integer(checkpoint.pages), .integer(checkpoint.fetched), .integer(checkpoint.updatedAt),
                ]
            )
        }
    }

    /// Forgets a finished window.
    public func clearHistoryWindow(startDate: Int64, endDate: Int64) throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
            try connection.query(
                "DELETE FROM history_recovery WHERE start_date = ? AND end_date = ?",
                [.integer(startDate), .integer(endDate)]
            )
        }
    }
}
