/// The operator dashboard's sessions, in the database so that every instance on it knows them.
public struct AdminSessionStore: Sendable {
    let database: SQLDatabase

    /// Stores a session until `expiresAt`; expired sessions go, and all but the `keep` latest.
    public func startAdminSession(key: String, expiresAt: Int64, now: Int64, keep: Int) throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
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

    /// When the session `key` ends, or nil if there is no such session (never started, ended, or dropped).
    public func adminSessionExpiry(key: String) throws(StorageError) -> Int64? {
        try database.readers.read { connection throws(StorageError) in
            try connection.query("SELECT expires_at FROM admin_sessions WHERE session_key = ?", [.text(key)]).first?
                .first?
                .integer
        }
    }

    public func endAdminSession(key: String) throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
            try connection.query("DELETE FROM admin_sessions WHERE session_key = ?", [.text(key)])
        }
    }

    /// Ends every session (the admin token was replaced).
    public func endAllAdminSessions() throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
            try connection.query("DELETE FROM admin_sessions")
        }
    }
}
