/// Where the visit journal got to in the tables: the visits and the last applied sequence commit together, so a
/// replay after a crash applies each journaled visit once.
extension SQLDatabase {
    /// The highest journal sequence whose visit is in the tables (0 when none).
    func journalApplied() throws(StorageError) -> Int64 {
        try readers.read { connection throws(StorageError) in try Self.journalApplied(in: connection) }
    }

    /// The same, read on `connection` (a ledger file opened without opening the ledger: `linkout check`).
    static func journalApplied(in connection: any SQLConnection) throws(StorageError) -> Int64 {
        let value = try connection.query("SELECT value FROM settings WHERE name = 'journal_applied'")
        return Int64(value.first?.first?.text ?? "0") ?? 0
    }

    /// Applies journaled visits and advances `journalApplied` to the last one, in one transaction.
    func applyJournaled(_ batch: [JournalRecord]) throws(StorageError) -> [RecordOutcome] {
        try writer.write { connection throws(StorageError) in
            var outcomes: [RecordOutcome] = []
            outcomes.reserveCapacity(batch.count)
            var tally = TokenDays.Tally()
            for record in batch {
                outcomes.append(try TokenStore.insert(record.visit, into: connection, tally: &tally))
            }
            try tally.write(into: connection)
            if let last = batch.last?.sequence {
                try connection.query(
                    """
                    INSERT INTO settings (name, value) VALUES ('journal_applied', ?)
                    ON CONFLICT(name) DO UPDATE SET value = excluded.value
                    """,
                    [.text(String(last))]
                )
            }
            return outcomes
        }
    }

    /// Applies the records the tables have not seen (above `applied`, read when not given), in sequence order and
    /// in batches of `JournalVisitRecorder.replayBatch`; returns how many.
    @discardableResult
    func applyMissing(_ records: [JournalRecord], applied: Int64? = nil) throws(StorageError) -> Int {
        let seen: Int64
        if let applied { seen = applied } else { seen = try journalApplied() }
        let missing = records.filter { $0.sequence > seen }.sorted { $0.sequence < $1.sequence }
        var start = 0
        while start < missing.count {
            let end = min(start + JournalVisitRecorder.replayBatch, missing.count)
            _ = try applyJournaled(Array(missing[start..<end]))
            start = end
        }
        return missing.count
    }
}
