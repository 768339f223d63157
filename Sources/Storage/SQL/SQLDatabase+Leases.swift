/// Outbox leases (see `Lease`): with several instances on one database, each due report or webhook delivery is
/// claimed by one of them, sent, and its attempt recorded (which ends the lease).
extension SQLDatabase {
    /// One claim: the due, unleased rows of `table` (the candidates `c`, narrowed by `inOrder`), oldest due
    /// first, leased in the same statement; other instances skip rows a claim has locked (PostgreSQL).
    func claim(
        from table: String,
        key: String,
        columns: String,
        now: Int64,
        limit: Int,
        lease: Lease,
        inOrder: String = "",
        inOrderParameters: [SQLValue] = []
    ) throws(StorageError) -> [[SQLValue]] {
        try writer.write { [dialect] connection throws(StorageError) in
            try connection.query(
                """
                UPDATE \(table) SET lease_owner = ?, lease_until = ?
                WHERE \(key) IN (
                    SELECT c.\(key) FROM \(table) c
                    WHERE c.state = 'pending' AND c.next_attempt_at <= ?
                      AND (c.lease_until IS NULL OR c.lease_until <= ?)
                      \(inOrder)
                    ORDER BY c.next_attempt_at LIMIT ?\(dialect.skipLocked))
                RETURNING \(columns)
                """,
                [.text(lease.owner), .integer(lease.until), .integer(now), .integer(now)] + inOrderParameters
                    + [.integer(Int64(limit))]
            )
        }
    }

    /// After this process's wall clock stepped back (`Ledger.bringForwardAfterClockStep`): pending rows whose next
    /// attempt lies further ahead than any wait are due now, and this instance's own leases that far ahead end.
    /// Another instance's lease is left alone: its clock, not this one's, set it. Returns how many rows changed.
    func bringForward(now: Int64, owner: String) throws(StorageError) -> Int {
        let farAhead = now + Lease.furthestAheadMilliseconds
        return try writer.write { connection throws(StorageError) in
            var changed = 0
            for table in Self.leasedTables {
                changed += try connection.change(
                    "UPDATE \(table) SET next_attempt_at = ? WHERE state = 'pending' AND next_attempt_at > ?",
                    [.integer(now), .integer(farAhead)]
                )
                changed += try connection.change(
                    "UPDATE \(table) SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ? AND lease_until > ?",
                    [.text(owner), .integer(farAhead)]
                )
            }
            return changed
        }
    }

    /// The tables whose rows an instance leases while it works on them.
    static let leasedTables = ["reports", "webhook_deliveries"]

    /// The statement that ends every lease of a leased table.
    static func releasing(_ table: String) -> String {
        "UPDATE \(table) SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL"
    }

    /// Ends every lease (SQLite at open: one process owns the file, so no lease can be another's).
    func releaseLeases() throws(StorageError) {
        try writer.write { connection throws(StorageError) in
            for table in Self.leasedTables { try connection.query(Self.releasing(table)) }
        }
    }
}
