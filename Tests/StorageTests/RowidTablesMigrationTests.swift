import Foundation
import TestSupport
import Testing

@testable import Storage

/// Migration 28 on SQLite: tokens and checkouts become rowid tables with every value kept, and the tables it
/// replaced are dropped after the migration, also when a crash left them for a later start.
@Suite("Migration 28: rowid tables")
struct RowidTablesMigrationTests {
    static let token = """
        INSERT INTO tokens (external_purchase_id, checkout_id, raw_token, app_apple_id, bundle_id, token_type,
            token_created_at, token_expires_at, environment, source, app_account_token, first_seen_at, last_seen_at,
            visit_count, report_due_at, app_account_source, report_queued_at, accepted_at)
        VALUES ('3f0c1d2e-0000-4000-8000-000000000001', 'checkout1', '', 1234567890, 'com.example', 'SERVICES',
            1000, 2000, 'production', 'app', 'account-1', 1100, 1200, 3, 1300, 'app', 1400, 1500)
        """

    static func row(_ connection: SQLiteConnection, _ sql: String) throws -> [SQLValue] {
        try #require(try connection.query(sql).first)
    }

    static func tableSQL(_ connection: SQLiteConnection, _ table: String) throws -> String {
        try #require(
            try connection.query("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(table)])
                .first?.first?.text
        )
    }

    @Test func everyValueIsKeptAndTheTablesHaveRowids() throws {
        let folder = LedgerTests.TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let connection = try SQLiteConnection(path: folder.path + "/ledger.sqlite")
        try Migrations.apply(to: connection, dialect: .sqlite, now: 1, upTo: 27)
        try connection.execute(Self.token)
        try connection.execute(
            "INSERT INTO checkouts (id, external_purchase_id, bundle_id, created_at) VALUES ('checkout1', "
                + "'3f0c1d2e-0000-4000-8000-000000000001', 'com.example', 1100)"
        )
        let tokenBefore = try Self.row(connection, "SELECT * FROM tokens")
        let checkoutBefore = try Self.row(connection, "SELECT * FROM checkouts")
        #expect(try Self.tableSQL(connection, "tokens").contains("WITHOUT ROWID"))

        try Migrations.apply(to: connection, dialect: .sqlite, now: 2)

        #expect(try Self.row(connection, "SELECT * FROM tokens") == tokenBefore)
        #expect(try Self.row(connection, "SELECT * FROM checkouts") == checkoutBefore)
        #expect(try !Self.tableSQL(connection, "tokens").contains("WITHOUT ROWID"))
        #expect(try !Self.tableSQL(connection, "checkouts").contains("WITHOUT ROWID"))
        #expect(try Self.row(connection, "SELECT rowid FROM tokens").first?.integer == 1)
        let replaced = try connection.query(
            "SELECT name FROM sqlite_master WHERE name IN ('tokens_by_id', 'checkouts_by_id')"
        )
        #expect(replaced.isEmpty)
        // The id stays the key: a second row with it is refused.
        #expect(throws: StorageError.self) { try connection.execute(Self.token) }
    }

    @Test func aReplacedTableLeftByACrashIsDroppedAtTheNextStart() throws {
        let folder = LedgerTests.TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let connection = try SQLiteConnection(path: folder.path + "/ledger.sqlite")
        try Migrations.apply(to: connection, dialect: .sqlite, now: 1)
        // What a crash between the migration's commit and the drop leaves.
        try connection.execute("CREATE TABLE tokens_by_id (external_purchase_id TEXT PRIMARY KEY) WITHOUT ROWID")
        try Migrations.apply(to: connection, dialect: .sqlite, now: 2)
        #expect(try connection.query("SELECT name FROM sqlite_master WHERE name = 'tokens_by_id'").isEmpty)
    }
}
