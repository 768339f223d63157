package import Storage

/// The CSV form of the audit log (RFC 4180 quoting as in `LedgerCSV`), for `linkout export --table audit`.
package enum AuditCSV {
    static let header = ["id", "at", "actor", "origin", "action", "subject", "before", "after"]

    package static func render(_ rows: [AuditEntry]) -> String {
        var lines = [header.joined(separator: ",")]
        for row in rows {
            let fields = [
                String(row.id), String(row.at), row.actor, row.origin, row.action, row.subject ?? "", row.before ?? "",
                row.after ?? "",
            ]
            lines.append(fields.map(LedgerCSV.quote).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
