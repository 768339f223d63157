import Foundation

/// What a restore keeps from the ledger it replaces: the answers to a leak. A customer credential revoked, or a
/// signing key retired, in the replaced ledger stays so in the restored one, whenever the backup was taken:
/// putting an older ledger back must never make a revoked secret or a retired (possibly leaked) key work again.
/// A signing key made after the backup (a rotation) is kept too, as the replaced ledger had it: entitlements it
/// signed must still verify, and a key the restored ledger never had would vanish from the JWKS with no word.
/// Only from the same installation (the same `identifiers` secret): another installation's keys (a staging
/// ledger restored over) never become this one's.
/// The audit trail after the backup is kept too (who revoked, retired, erased or signed in since), of the same
/// installation only: the log is the installation's account of who did what, kept as long as the ledger, and a
/// restore is one more entry in it; another installation's entries would tell of purchases and people it never had.
/// So are the accounts erased since (what is made later for them keeps saying `[erased]`) and when each key last
/// signed (a retirement waits for what it signed).
/// Everything else of the replaced ledger is set aside whole (`replaced-<ms>/`), not merged.
extension LedgerBackup {
    /// What was carried over.
    public struct Revocations: Sendable, Equatable {
        /// Whether a replaced ledger was there and read whole: when not, nothing says all that was revoked since.
        public var complete = false
        public var credentials = 0
        public var signingKeys = 0
        /// Signing keys made in the replaced ledger after the backup (rotations), carried whole.
        public var newSigningKeys = 0
        /// Audit entries of the replaced ledger made after the restored one's last.
        public var auditEntries = 0
        /// Accounts erased in the replaced ledger (`linkout erase --account-token`) the copy did not know.
        public var erasedAccounts = 0
        /// Whether the replaced ledger was of another installation (another `identifiers` secret): only its
        /// revocations and retirements are carried; the rest stays with it, set aside.
        public var anotherInstallation = false
    }

    /// Revokes in the copy at `restored` each credential the ledger at `replaced` has revoked, and retires each
    /// key it has retired, at the same times. What cannot be read of a replaced ledger (damaged, another schema)
    /// is not carried (`complete` false), and `restore` then says what to redo by hand; what can be, is.
    static func carryRevocations(from replaced: String, into restored: String) throws(StorageError) -> Revocations {
        guard FileManager.default.fileExists(atPath: replaced),
            let old = try? SQLiteConnection(path: replaced, readOnly: true)
        else { return Revocations() }
        let revoked = try? old.query("SELECT id, revoked_at FROM customer_credentials WHERE revoked_at IS NOT NULL")
        let retired = try? old.query("SELECT kid, retired_at FROM signing_keys WHERE retired_at IS NOT NULL")
        let (credentials, keys) = (revoked ?? [], retired ?? [])
        let copy = try SQLiteConnection(path: restored)
        let sameInstallation = try? installationSecret(of: old) == installationSecret(of: copy)
        let allKeys =
            sameInstallation == true
            ? try? old.query("SELECT \(SigningKeyStore.columns) FROM signing_keys").map(SigningKeyStore.record) : []
        // Keyed with the installation's secret, so only of the same installation: the accounts erased (events made
        // later must keep naming them `[erased]`), the ids erasures by e-mail followed, and when each key last
        // signed and for how long (a retirement must wait for what it signed).
        let notes =
            sameInstallation == true
            ? try? old.query(
                "SELECT name, value FROM settings WHERE name LIKE ? OR name LIKE ? OR name LIKE ? OR name LIKE ?",
                [
                    .text(PrivacyStore.erasedAccountSetting("%")), .text(SigningKeyStore.lifetimeSetting("%")),
                    .text(SigningKeyStore.lastSignedSetting("%")), .text(PrivacyStore.erasedLinksSetting("%")),
                ]
            ) : []
        var carried = Revocations(complete: revoked != nil && retired != nil && allKeys != nil && notes != nil)
        carried.anotherInstallation = sameInstallation == false
        // Whose ledger it was is unknown (its secret unreadable): its keys, notes and audit trail are not carried.
        if sameInstallation == nil { carried.complete = false }
        // A rollback's schema may predate credentials and keys (schema 24), or the audit log: nothing of them to
        // keep then.
        let takesCredentials = try has(copy, "customer_credentials", "revoked_at")
        let takesKeys = try has(copy, "signing_keys", "retired_at")
        let takesAudit = try has(copy, "audit_log", "action")
        let read = sameInstallation == true && takesAudit ? try laterAudit(of: old, than: copy) : []
        // A log that cannot be read is not carried, and the restore says what to redo by hand.
        carried.complete = carried.complete && read != nil
        let audit = read ?? []
        try copy.begin()
        do throws(StorageError) {
            for row in audit {
                try copy.query(
                    "INSERT INTO audit_log (at, actor, origin, action, subject, before_state, after_state) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    row
                )
            }
            carried.auditEntries = audit.count
            for row in credentials where takesCredentials {
                carried.credentials += try copy.query(
                    "UPDATE customer_credentials SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING 1",
                    [row[1], row[0]]
                ).count
            }
            // Before the retirements: a key made after the backup and retired since is carried, then retired. One
            // that would start signing at the same moment as a key the copy has is not (which one signs would
            // be unclear).
            for var key in allKeys ?? [] where takesKeys {
                key.retiredAt = nil
                if try SigningKeyStore.insertStartingAlone(key, into: copy) { carried.newSigningKeys += 1 }
            }
            for row in notes ?? [] {
                // An erasure is marked once (counted when the copy lacked it); a signing note only grows.
                if row[0].text?.hasPrefix(PrivacyStore.erasedAccountSetting("")) == true {
                    carried.erasedAccounts += try copy.change(
                        "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO NOTHING",
                        row
                    )
                } else if let name = row[0].text, name.hasPrefix(PrivacyStore.erasedLinksSetting("")) {
                    // Both lists' ids: each ledger's erasures followed some.
                    let kept = try copy.query("SELECT value FROM settings WHERE name = ?", [.text(name)])
                    try copy.query(
                        SettingsStore.replaceSQL,
                        [
                            .text(name),
                            .text(PrivacyStore.mergedIds(kept.first?.first?.text, PrivacyStore.ids(row[1].text))),
                        ]
                    )
                } else {
                    try copy.query(SettingsStore.growingValueSQL, row)
                }
            }
            for row in keys where takesKeys {
                carried.signingKeys += try copy.query(
                    "UPDATE signing_keys SET retired_at = ? WHERE kid = ? AND retired_at IS NULL RETURNING 1",
                    [row[1], row[0]]
                ).count
            }
            try copy.commit()
        } catch {
            try? copy.rollback()
            throw error
        }
        return carried
    }

    /// The ledger's `identifiers` secret, made once at its first start: what tells two ledgers of one
    /// installation from two installations.
    private static func installationSecret(of connection: SQLiteConnection) throws(StorageError) -> String? {
        try connection.query("SELECT value FROM settings WHERE name = 'identifiers'").first?.first?.text
    }

    /// The replaced ledger's audit entries made after the copy's last, in their order; nil when its log cannot be
    /// read. By id, not time: the replaced ledger went on from the backup, so its entries past the copy's last id
    /// are those made since (two in one millisecond, or under a clock set back, alike).
    private static func laterAudit(of old: SQLiteConnection, than copy: SQLiteConnection) throws(StorageError)
        -> [[SQLValue]]?
    {
        let last = try copy.query("SELECT COALESCE(MAX(id), 0) FROM audit_log").first?.first?.integer ?? 0
        return try? old.query(
            "SELECT at, actor, origin, action, subject, before_state, after_state FROM audit_log WHERE id > ? "
                + "ORDER BY id",
            [.integer(last)]
        )
    }
}
