/// The ledger's named values: progress markers (`last_history_pass`, ...) and secrets made on first use.
public struct SettingsStore: Sendable {
    let database: SQLDatabase

    /// A value from the ledger's settings (`last_history_pass`, ...).
    public func setting(named name: String) throws(StorageError) -> String? {
        try database.readers.read { connection throws(StorageError) in
            try connection.query("SELECT value FROM settings WHERE name = ?", [.text(name)]).first?.first?.text
        }
    }

    /// Every setting whose name starts with `prefix`, by name.
    public func settings(prefixed prefix: String) throws(StorageError) -> [(name: String, value: String)] {
        try database.readers.read { connection throws(StorageError) in
            try connection.query(
                // The length typed: PostgreSQL's substr takes an integer, and parameters go as bigint.
                "SELECT name, value FROM settings WHERE substr(name, 1, CAST(? AS INTEGER)) = ? ORDER BY name",
                [.integer(Int64(prefix.utf8.count)), .text(prefix)]
            ).compactMap { row in row[0].text.flatMap { name in row[1].text.map { (name, $0) } } }
        }
    }

    /// Writes a named value that only ever grows (a moment, a lifetime): the larger of the stored and the new one
    /// stands, whichever writer comes last. Parameters: the name, the value.
    static let growingValueSQL = """
        INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value
        WHERE CAST(settings.value AS BIGINT) < CAST(excluded.value AS BIGINT)
        """

    /// A setting written whatever it held. Parameters: name, value.
    static let replaceSQL =
        "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value"

    public func setSetting(named name: String, to value: String) throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
            try connection.query(Self.replaceSQL, [.text(name), .text(value)])
        }
    }

    /// A named secret kept in the ledger (created at random on first use), e.g. the key for checkout ids.
    public func secret(named name: String) throws(StorageError) -> String {
        try database.writer.write { connection throws(StorageError) in
            var bytes = [UInt8](repeating: 0, count: 32)
            var generator = SystemRandomNumberGenerator()
            for index in bytes.indices { bytes[index] = generator.next() }
            let fresh = bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
            try connection.query(
                "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO NOTHING",
                [.text(name), .text(fresh)]
            )
            let rows = try connection.query("SELECT value FROM settings WHERE name = ?", [.text(name)])
            guard let value = rows.first?.first?.text else {
                throw StorageError(.notFound, "secret \(name) missing after insert")
            }
            return value
        }
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
