/// The operator dashboard's sessions, in the database so that every instance on it knows them.
extension SQLEngine {
    /// Stores a new session and drops the expired ones, and beyond the `keep` latest, the oldest: a flood of
    /// sign-ins cannot grow the table without bound.
    func startAdminSession(key: String, expiresAt: Int64, now: Int64, keep: Int) throws(StorageError) {
        try writer.write { connection throws(StorageError) in
            try connection.query("DELETE FROM admin_sessions WHERE expires_at <= ?", [.integer(now)])
            try connection.query(
                "INSERT INTO admin_sessions (session_key, expires_at) VALUES (?, ?)",
                [.text(key), .integer(expiresAt)]
            )
            try connection.query(
                """
                DELETE FROM admin_sessions WHERE session_key IN
                    (SELECT session_key FROM admin_sessions ORDER BY expires_at DESC, session_key LIMIT 1000000 OFFSET ?)
                """,
                [.integer(Int64(keep))]
            )
        }
    }

    func adminSessionExpiry(key: String) throws(StorageError) -> Int64? {
        try read { connection throws(StorageError) in
            try connection.query("SELECT expires_at FROM admin_sessions WHERE session_key = ?", [.text(key)]).first?
                .first?
                .integer
        }
    }

    func endAdminSession(key: String) throws(StorageError) {
        try writer.write { connection throws(StorageError) in
            try connection.query("DELETE FROM admin_sessions WHERE session_key = ?", [.text(key)])
        }
    }
}
