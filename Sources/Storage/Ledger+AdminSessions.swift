/// The operator dashboard's sessions, by a key the caller derives from the cookie's id (never the id itself).
extension Ledger {
    /// Stores a session until `expiresAt`; expired sessions go, and all but the `keep` latest.
    public func startAdminSession(key: String, expiresAt: Int64, now: Int64, keep: Int) throws(StorageError) {
        try engine.startAdminSession(key: key, expiresAt: expiresAt, now: now, keep: keep)
    }

    /// When the session `key` ends, or nil if there is no such session (never started, ended, or dropped).
    public func adminSessionExpiry(key: String) throws(StorageError) -> Int64? {
        try engine.adminSessionExpiry(key: key)
    }

    public func endAdminSession(key: String) throws(StorageError) {
        try engine.endAdminSession(key: key)
    }
}
