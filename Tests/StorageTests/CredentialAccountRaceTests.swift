import Domain
import Foundation
import Lifecycle
import Testing

@testable import Storage

/// Two redemptions with one credential at once, of purchases of two accounts, each read the credential without an
/// account before either wrote: both went through, and the credential held purchases of two accounts. The
/// redemption now checks the account in the update that binds it; the code it refuses stays unused.
@Suite struct CredentialAccountRaceTests {
    static let first = "6f1c1a52-5d3c-4c84-9a57-8f0c42e6d1a0"
    static let second = "00000000-0000-4000-8000-000000000001"

    static func code(_ hash: String, purchase: String, at now: Int64, into ledger: Ledger) throws {
        try ledger.database.writer.write { connection throws(StorageError) in
            try connection.query(
                "INSERT INTO redemptions (code_hash, purchase_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                [.text(hash), .text(purchase), .integer(now), .integer(now + Milliseconds.day)]
            )
        }
    }

    @Test func aCredentialBoundMeanwhileRefusesAnotherAccountsPurchase() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try LedgerTests.open(folder)
        defer { ledger.close() }
        let now = Clock.system.nowMilliseconds()
        try Self.code("code-x", purchase: "purchase-x", at: now, into: ledger)
        try Self.code("code-y", purchase: "purchase-y", at: now, into: ledger)
        try Self.code("code-z", purchase: "purchase-z", at: now, into: ledger)
        let credential = CustomerCredential(id: "cred_a", bundleId: "com.example", appAccountToken: nil, createdAt: now)
        try ledger.database.writer.write { connection throws(StorageError) in
            try CredentialStore.insert(credential, secretHash: "hash-a", in: connection)
        }
        // Both redemptions were judged on the credential without an account; the first binds it.
        let x = try ledger.credentials.redeem(
            codeHash: "code-x",
            at: now,
            grant: .extend(credentialId: "cred_a", account: Self.first)
        )
        guard case .success(.redeemed) = x else { Issue.record("\(x)"); return }
        let y = try ledger.credentials.redeem(
            codeHash: "code-y",
            at: now,
            grant: .extend(credentialId: "cred_a", account: Self.second)
        )
        #expect(y == .failure(.anotherAccount))
        #expect(try ledger.entitlements.redemption(codeHash: "code-y")?.redeemedAt == nil)
        // A purchase without an account, or of the same one, still joins it.
        let z = try ledger.credentials.redeem(
            codeHash: "code-z",
            at: now,
            grant: .extend(credentialId: "cred_a", account: nil)
        )
        guard case .success(.redeemed) = z else { Issue.record("\(z)"); return }
        let held = try ledger.database.readers.read { connection throws(StorageError) in
            try connection.query(
                "SELECT purchase_id FROM credential_purchases WHERE credential_id = 'cred_a' ORDER BY 1"
            ).compactMap { $0.first?.text }
        }
        #expect(held == ["purchase-x", "purchase-z"])
        // Revoked meanwhile: said as such, and the code stays unused too.
        try ledger.database.writer.write { connection throws(StorageError) in
            try connection.query("UPDATE customer_credentials SET revoked_at = ? WHERE id = 'cred_a'", [.integer(now)])
        }
        try Self.code("code-w", purchase: "purchase-w", at: now, into: ledger)
        let w = try ledger.credentials.redeem(
            codeHash: "code-w",
            at: now,
            grant: .extend(credentialId: "cred_a", account: Self.first)
        )
        #expect(w == .failure(.revoked))
        #expect(try ledger.entitlements.redemption(codeHash: "code-w")?.redeemedAt == nil)
    }
}
