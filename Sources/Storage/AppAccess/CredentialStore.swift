import Domain

/// Customer credentials (`customer_credentials`, `credential_purchases`): issued when an app redeems a code,
/// looked up by the keyed hash of the secret the app presents, revoked or reissued by the operator.
public struct CredentialStore: Sendable {
    let database: SQLDatabase

    static let columns = "id, bundle_id, app_account_token, created_at, revoked_at, replaced_by"

    static func credential(_ row: [SQLValue], in connection: any SQLConnection) throws(StorageError)
        -> CustomerCredential
    {
        var credential = CustomerCredential(
            id: row[0].text ?? "",
            bundleId: row[1].id() ?? "",
            appAccountToken: row[2].text,
            createdAt: row[3].integer ?? 0,
            revokedAt: row[4].integer,
            replacedBy: row[5].text
        )
        credential.purchaseIds = try connection.query(
            "SELECT purchase_id FROM credential_purchases WHERE credential_id = ? ORDER BY added_at, purchase_id",
            [.text(credential.id)]
        ).compactMap { $0.first?.text }
        return credential
    }

    static func find(_ condition: String, _ value: String, in connection: any SQLConnection) throws(StorageError)
        -> CustomerCredential?
    {
        guard
            let row = try connection.query(
                "SELECT \(columns) FROM customer_credentials WHERE \(condition) = ?",
                [.text(value)]
            ).first
        else { return nil }
        return try credential(row, in: connection)
    }

    /// The credential whose secret hashes to `secretHash`, revoked or not.
    public func credential(secretHash: String) throws(StorageError) -> CustomerCredential? {
        try database.readers.read { connection throws(StorageError) in
            try Self.find("secret_hash", secretHash, in: connection)
        }
    }

    public func credential(id: String) throws(StorageError) -> CustomerCredential? {
        try database.readers.read { connection throws(StorageError) in try Self.find("id", id, in: connection) }
    }

    /// The credentials that cover a purchase, newest first.
    public func credentials(purchaseId: String) throws(StorageError) -> [CustomerCredential] {
        try database.readers.read { connection throws(StorageError) in
            let rows = try connection.query(
                """
                SELECT c.id, c.bundle_id, c.app_account_token, c.created_at, c.revoked_at, c.replaced_by
                FROM credential_purchases p JOIN customer_credentials c ON c.id = p.credential_id
                WHERE p.purchase_id = ? ORDER BY c.created_at DESC, c.id
                """,
                [.text(purchaseId)]
            )
            var credentials: [CustomerCredential] = []
            for row in rows { credentials.append(try Self.credential(row, in: connection)) }
            return credentials
        }
    }

    /// Why a credential to extend takes no purchase; the code stays unused.
    public enum ExtensionRefusal: Error, Sendable, Equatable {
        /// Revoked (or reissued) since the request read it: the caller answers 401 `credential_revoked`.
        case revoked
        /// Bound meanwhile to another account than the purchase's (a redemption of that account's purchase
        /// racing this one): the caller answers 409 `account_mismatch`.
        case anotherAccount
    }

    /// Uses up the code and grants what the redemption gives, in one transaction: either both are written or
    /// neither. A refusal, with the code unused, when the credential to extend can no longer take the purchase.
    /// The caller checked the credential before, but two redemptions with one credential at once each saw it
    /// without an account, and it ended up holding purchases of two accounts: the account is checked again here,
    /// by the update that binds it.
    public func redeem(codeHash: String, at now: Int64, grant: CredentialGrant) throws(StorageError)
        -> Result<RedemptionOutcome, ExtensionRefusal>
    {
        try database.writer.write { connection throws(StorageError) in
            if case .extend(let id, let account) = grant {
                // The update locks the row (a revocation racing this waits for it, or wins before it), and binds
                // a credential without an account to the purchase's.
                let live = try connection.query(
                    """
                    UPDATE customer_credentials SET app_account_token = COALESCE(app_account_token, ?)
                    WHERE id = ? AND revoked_at IS NULL
                      AND (app_account_token IS NULL OR CAST(? AS TEXT) IS NULL OR app_account_token = ?)
                    RETURNING 1
                    """,
                    [.optional(account), .text(id), .optional(account), .optional(account)]
                )
                if live.isEmpty {
                    let revoked = try connection.query(
                        "SELECT 1 FROM customer_credentials WHERE id = ? AND revoked_at IS NULL",
                        [.text(id)]
                    ).isEmpty
                    return .failure(revoked ? .revoked : .anotherAccount)
                }
            }
            let outcome = try EntitlementStore.claim(codeHash: codeHash, at: now, in: connection)
            guard case .redeemed(let record) = outcome else { return .success(outcome) }
            let credentialId: String
            switch grant {
            case .issue(let credential, let secretHash):
                try Self.insert(credential, secretHash: secretHash, in: connection)
                credentialId = credential.id
            case .extend(let id, _):
                credentialId = id
            }
            try Self.add(purchaseId: record.purchaseId, to: credentialId, at: now, in: connection)
            return .success(outcome)
        }
    }

    static func insert(_ credential: CustomerCredential, secretHash: String, in connection: any SQLConnection)
        throws(StorageError)
    {
        try connection.query(
            """
            INSERT INTO customer_credentials (id, secret_hash, bundle_id, app_account_token, created_at)
            VALUES (?, ?, ?, ?, ?)
            """,
            [
                .text(credential.id), .text(secretHash), .id(credential.bundleId),
                .optional(credential.appAccountToken), .integer(credential.createdAt),
            ]
        )
    }

    static func add(purchaseId: String, to credentialId: String, at now: Int64, in connection: any SQLConnection)
        throws(StorageError)
    {
        try connection.query(
            """
            INSERT INTO credential_purchases (credential_id, purchase_id, added_at) VALUES (?, ?, ?)
            ON CONFLICT(credential_id, purchase_id) DO NOTHING
            """,
            [.text(credentialId), .text(purchaseId), .integer(now)]
        )
    }

    /// Revokes a credential: from now on it gets 401. Nil when there is no such credential; a revoked one is
    /// returned as it is.
    public func revoke(id: String, at now: Int64) throws(StorageError) -> CustomerCredential? {
        try database.writer.write { connection throws(StorageError) in
            try connection.query(
                "UPDATE customer_credentials SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                [.integer(now), .text(id)]
            )
            return try Self.find("id", id, in: connection)
        }
    }

    /// Revokes `id` and issues `replacement` in its place, covering the same purchases for the same app and
    /// account (a person who lost the device that held it).
    public func reissue(id: String, as replacement: CustomerCredential, secretHash: String) throws(StorageError)
        -> ReissueOutcome
    {
        try database.writer.write { connection throws(StorageError) in
            // Claimed by the update, so two reissues at once cannot both replace it.
            let claimed = try connection.query(
                """
                UPDATE customer_credentials SET revoked_at = COALESCE(revoked_at, ?), replaced_by = ?
                WHERE id = ? AND replaced_by IS NULL RETURNING id
                """,
                [.integer(replacement.createdAt), .text(replacement.id), .text(id)]
            )
            guard let old = try Self.find("id", id, in: connection) else { return .notFound }
            guard !claimed.isEmpty else { return .alreadyReplaced(by: old.replacedBy ?? "") }
            var fresh = replacement
            fresh.bundleId = old.bundleId
            fresh.appAccountToken = old.appAccountToken
            try Self.insert(fresh, secretHash: secretHash, in: connection)
            for purchaseId in old.purchaseIds {
                try Self.add(purchaseId: purchaseId, to: fresh.id, at: fresh.createdAt, in: connection)
            }
            guard let issued = try Self.find("id", fresh.id, in: connection) else { return .notFound }
            return .reissued(issued)
        }
    }
}
