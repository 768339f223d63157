import Domain
import Foundation
import TestSupport
import Testing

@testable import Storage

/// Migration 29 on SQLite: visits from before it are still found by their token, the index of every visit by
/// token is replaced after the migration (also when a crash came in between), and the lookups use the new indexes.
@Suite("Migration 29: a token's first visit found by its time")
struct VisitLookupMigrationTests {
    static func indexes(_ connection: SQLiteConnection) throws -> Set<String> {
        Set(
            try connection.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'visits'")
                .compactMap { $0.first?.text }
        )
    }

    @Test func visitsFromBeforeAreStillFoundAndTheOldIndexGoes() throws {
        let folder = LedgerTests.TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let path = folder.path + "/linkout.sqlite"
        do {
            let connection = try SQLiteConnection(path: path)
            try Migrations.apply(to: connection, dialect: .sqlite, now: 1, upTo: 28)
            try connection.execute(
                """
                INSERT INTO tokens (external_purchase_id, checkout_id, raw_token, app_apple_id, bundle_id,
                    token_created_at, environment, source, first_seen_at, last_seen_at, visit_count)
                VALUES ('old', 'c-old', '', 1234567890, 'com.example', 900, 'production', 'url', 1000, 2000, 2);
                INSERT INTO visits (checkout_id, external_purchase_id, visited_at, landing_path, had_token)
                VALUES ('c-old', 'old', 1000, '/', 1), ('c-old', 'old', 2000, '/', 1);
                """
            )
            #expect(try Self.indexes(connection).contains("visits_token"))
        }
        let ledger = try Ledger(directory: folder.path)
        defer { ledger.close() }
        _ = try ledger.tokens.recordVisit(LedgerTests.visit("old", checkout: "c-old", at: 3_000))
        _ = try ledger.tokens.recordVisit(LedgerTests.visit("new", checkout: "c-new", at: 3_000))
        #expect(try ledger.tokens.visits(for: "old").map(\.visitedAt) == [1_000, 2_000, 3_000])
        #expect(try ledger.tokens.visits(for: "new").map(\.visitedAt) == [3_000])

        let connection = try SQLiteConnection(path: path)
        let indexes = try Self.indexes(connection)
        #expect(!indexes.contains("visits_token"))
        #expect(indexes.isSuperset(of: ["visits_recorded", "visits_token_later"]))
        // Only the visit that recorded its token is marked, and only it stays out of the index by token.
        let marked = try connection.query("SELECT external_purchase_id FROM visits WHERE recorded_token = 1")
        #expect(marked.compactMap { $0.first?.text } == ["new"])
    }

    @Test func aCrashBeforeTheIndexWasReplacedIsFinishedAtTheNextStart() throws {
        let folder = LedgerTests.TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let connection = try SQLiteConnection(path: folder.path + "/linkout.sqlite")
        try Migrations.apply(to: connection, dialect: .sqlite, now: 1)
        // What a crash between the migration's commit and the new index leaves.
        try connection.execute(
            "DROP INDEX visits_token_later; CREATE INDEX visits_token ON visits(external_purchase_id)"
        )
        try Migrations.apply(to: connection, dialect: .sqlite, now: 2)
        #expect(try Self.indexes(connection) == ["visits_recorded", "visits_token_later"])
    }

    /// The token page's lookup walks no table: it uses the two indexes.
    @Test func theLookupsUseTheIndexes() throws {
        let folder = LedgerTests.TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let connection = try SQLiteConnection(path: folder.path + "/linkout.sqlite")
        try Migrations.apply(to: connection, dialect: .sqlite, now: 1)
        let plan = try connection.query(
            "EXPLAIN QUERY PLAN " + TokenStore.visitsSQL,
            [.text("x"), .text("x"), .text("x"), .integer(10)]
        ).compactMap { $0.last?.text }
        #expect(plan.contains { $0.contains("visits USING INDEX visits_recorded (visited_at=?)") }, "\(plan)")
        #expect(
            plan.contains { $0.contains("visits USING INDEX visits_token_later (external_purchase_id=?)") },
            "\(plan)"
        )
        #expect(!plan.contains { $0.hasPrefix("SCAN visits") }, "\(plan)")
    }
}
