/// The audit log (`audit_log`): appended to, read in pages, never changed. No interface updates or deletes a row,
/// and the database refuses it too (a trigger), so a row stays as written for as long as the ledger is kept.
public struct AuditStore: Sendable {
    let database: SQLDatabase

    static let columns = "id, at, actor, origin, action, subject, before_state, after_state"

    static func entry(_ row: [SQLValue]) -> AuditEntry {
        var entry = AuditEntry(
            at: row[1].integer ?? 0,
            actor: row[2].text ?? "",
            origin: row[3].text ?? "",
            action: row[4].text ?? "",
            subject: row[5].text,
            before: row[6].text,
            after: row[7].text
        )
        entry.id = row[0].integer ?? 0
        return entry
    }

    public func append(_ entry: AuditEntry) throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
            try Self.append(entry, in: connection)
        }
    }

    static func append(_ entry: AuditEntry, in connection: any SQLConnection) throws(StorageError) {
        try connection.query(
            """
            INSERT INTO audit_log (at, actor, origin, action, subject, before_state, after_state)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .integer(entry.at), .text(entry.actor), .text(entry.origin), .text(entry.action),
                .optional(entry.subject), .optional(entry.before), .optional(entry.after),
            ]
        )
    }

    /// Newest first, `limit` of them, those older than the entry `before` (a page's last id) when given.
    public func entries(before: Int64? = nil, limit: Int = 100) throws(StorageError) -> [AuditEntry] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT \(Self.columns) FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?",
                [.integer(before ?? Int64.max), .integer(Int64(limit))]
            ).map(Self.entry)
        }
    }
}
