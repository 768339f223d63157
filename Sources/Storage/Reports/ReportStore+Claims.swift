/// The report outbox's leases (see `Lease`): with several instances on one database, each due report is claimed
/// by one of them, sent, and its attempt recorded (which ends the lease).
extension ReportStore {
    /// Claims the due reports for this instance until `leaseUntil`: pending, due, and not leased (or the lease
    /// ended). Claimed reports come back, oldest due first; until their attempt is recorded no claim returns
    /// them again, this instance's included.
    /// `scopes`: only the reports of these apps in these environments (`.only`), or all but theirs (`.excluding`):
    /// while Apple refuses one app's reports, the others go on, and a probe tries one of that app's.
    public func claimDueReports(now: Int64, limit: Int, leaseUntil: Int64, scopes: ScopeFilter = .all)
        throws(StorageError) -> [StoredReport]
    {
        let (sql, parameters) = scopes.predicate(table: "c")
        return try database.claim(
            from: "reports",
            key: "request_identifier",
            columns: Self.reportColumns,
            now: now,
            limit: limit,
            lease: Lease(owner: instance, until: leaseUntil),
            inOrder: sql,
            inOrderParameters: parameters
        )
        .decoded(Self.storedReport).sorted { $0.nextAttemptAt < $1.nextAttemptAt }
    }

    /// Ends this instance's claims on reports it will not send after all.
    public func releaseReportClaims(_ requestIdentifiers: [String]) throws(StorageError) {
        try database.writer.write { [instance] connection throws(StorageError) in
            for identifier in requestIdentifiers {
                try connection.query(
                    "UPDATE reports SET lease_owner = NULL, lease_until = NULL WHERE request_identifier = ? AND lease_owner = ?",
                    [.text(identifier), .text(instance)]
                )
            }
        }
    }
}
