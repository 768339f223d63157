/// The entitlement signing keys (`signing_keys`): every instance on one ledger signs with the same key and
/// publishes the same set.
public struct SigningKeyStore: Sendable {
    let database: SQLDatabase

    static let columns = "kid, public_jwk, private_key, created_at, signs_from, retired_at"

    static func record(_ row: [SQLValue]) -> SigningKeyRecord {
        SigningKeyRecord(
            kid: row[0].text ?? "",
            publicJWK: row[1].text ?? "",
            privateKeyPEM: row[2].text,
            createdAt: row[3].integer ?? 0,
            signsFrom: row[4].integer ?? 0,
            retiredAt: row[5].integer
        )
    }

    /// Every key, oldest first; retired ones only when asked.
    public func keys(includingRetired: Bool = false) throws(StorageError) -> [SigningKeyRecord] {
        try database.readers.read { connection throws(StorageError) in
            let filter = includingRetired ? "" : "WHERE retired_at IS NULL"
            return try connection.query(
                "SELECT \(Self.columns) FROM signing_keys \(filter) ORDER BY signs_from, created_at, kid"
            ).map(Self.record)
        }
    }

    /// Adds a key; false when one with its id is there already (a key file read again at start-up).
    @discardableResult
    public func insert(_ key: SigningKeyRecord) throws(StorageError) -> Bool {
        try database.writer.write { connection throws(StorageError) in try Self.insert(key, into: connection) }
    }

    private static func insert(_ key: SigningKeyRecord, into connection: any SQLConnection) throws(StorageError)
        -> Bool
    {
        !(try connection.query(
            """
            INSERT INTO signing_keys (\(columns)) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(kid) DO NOTHING RETURNING 1
            """,
            [
                .text(key.kid), .text(key.publicJWK), .optional(key.privateKeyPEM), .integer(key.createdAt),
                .integer(key.signsFrom), .optional(key.retiredAt),
            ]
        ).isEmpty)
    }

    /// Adds a rotation's key unless another key already begins signing at its `signsFrom` (two rotations at
    /// once read the same keys and picked the same moment); false then, and the caller picks again. Checked and
    /// written in one transaction, instances on PostgreSQL taking turns.
    public func insertStartingAlone(_ key: SigningKeyRecord) throws(StorageError) -> Bool {
        try database.writer.write { [dialect = database.dialect] connection throws(StorageError) in
            if let serialize = dialect.serializeOnKey {
                try connection.query(serialize, [.text("signing-key-rotation")])
            }
            return try Self.insertStartingAlone(key, into: connection)
        }
    }

    /// The same in the caller's transaction (a restore keeping a rotation made after its backup).
    static func insertStartingAlone(_ key: SigningKeyRecord, into connection: any SQLConnection)
        throws(StorageError) -> Bool
    {
        let taken = try connection.query("SELECT 1 FROM signing_keys WHERE signs_from = ?", [.integer(key.signsFrom)])
        guard taken.isEmpty else { return false }
        return try insert(key, into: connection)
    }

    /// A key file's key named again after another key began signing (a file switched back: A, then B, then A):
    /// it signs again from now, so it is the successor of the key it takes over from, whose retirement then waits
    /// for what that key signed to expire. Moved strictly after every key that signs by now, like a rotation's
    /// start; false when nothing began signing after it (it still is the newest).
    @discardableResult
    public func resumeSigning(kid: String, at now: Int64) throws(StorageError) -> Bool {
        try database.writer.write { [dialect = database.dialect] connection throws(StorageError) in
            if let serialize = dialect.serializeOnKey {
                try connection.query(serialize, [.text("signing-key-rotation")])
            }
            let starts = try connection.query("SELECT kid, signs_from FROM signing_keys").compactMap { row in
                row[1].integer.map { (kid: row[0].text ?? "", signsFrom: $0) }
            }
            guard let own = starts.first(where: { $0.kid == kid })?.signsFrom,
                let newest = starts.filter({ $0.kid != kid && $0.signsFrom <= now }).map(\.signsFrom).max(),
                newest > own
            else { return false }
            let taken = Set(starts.map(\.signsFrom))
            var signsFrom = max(now, newest + 1)
            while taken.contains(signsFrom) { signsFrom += 1 }
            try connection.query(
                "UPDATE signing_keys SET signs_from = ? WHERE kid = ?",
                [.integer(signsFrom), .text(kid)]
            )
            return true
        }
    }

    /// What the servers recorded of their signing with `kid`: the longest `lifetimeSeconds` they signed
    /// entitlements with, and the latest moment one noted it was signing (nil before this release's first
    /// signature with the key). A key's retirement waits for both.
    public func signing(kid: String) throws(StorageError) -> (longestLifetimeSeconds: Int64?, lastSignedAt: Int64?) {
        try database.readers.read { connection throws(StorageError) in
            func value(_ name: String) throws(StorageError) -> Int64? {
                try connection.query("SELECT value FROM settings WHERE name = ?", [.text(name)]).first?.first?.text
                    .flatMap { Int64($0) }
            }
            return (try value(Self.lifetimeSetting(kid)), try value(Self.lastSignedSetting(kid)))
        }
    }

    /// Records that a server signs with `kid` at `now`, entitlements that live `lifetimeSeconds`: each value only
    /// ever grows, whichever instance writes last (two instances on PostgreSQL noting at once keep the larger).
    public func recordSigning(kid: String, lifetimeSeconds: Int64, at now: Int64) throws(StorageError) {
        try database.writer.write { connection throws(StorageError) in
            for (name, value) in [(Self.lifetimeSetting(kid), lifetimeSeconds), (Self.lastSignedSetting(kid), now)] {
                try connection.query(SettingsStore.growingValueSQL, [.text(name), .text(String(value))])
            }
        }
    }

    /// Named values in `settings` per key (no column of their own, so the schema and every earlier release's
    /// reading of `signing_keys` stay as they are).
    static func lifetimeSetting(_ kid: String) -> String { "signing_key_lifetime." + kid }
    static func lastSignedSetting(_ kid: String) -> String { "signing_key_last_signed." + kid }

    /// Takes a key out of the JWKS; false when there is no such key still published.
    public func retire(kid: String, at now: Int64) throws(StorageError) -> Bool {
        try database.writer.write { connection throws(StorageError) in
            !(try connection.query(
                "UPDATE signing_keys SET retired_at = ? WHERE kid = ? AND retired_at IS NULL RETURNING 1",
                [.integer(now), .text(kid)]
            ).isEmpty)
        }
    }
}
