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
