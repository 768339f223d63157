import Foundation
import LinkOut
import TestSupport
import Testing

@testable import Storage

/// A rollback onto a ledger a later release migrated: `linkout serve` (and every command that opens the ledger)
/// refuses it with exit 2 and both schema versions, on the engine under test (SQLite, or PostgreSQL in the
/// PostgreSQL pass).
@Suite("Schema versions")
struct SchemaVersionProcessTests {
    @Test func aLedgerFromANewerReleaseIsRefusedWithExit2NamingBothVersions() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-schema-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try TestDatabase.postgresURL(for: directory.path)
        let ledger =
            try url.map { try Ledger(postgres: PostgresTarget(url: $0, password: nil)) }
            ?? Ledger(directory: directory.path)
        let newer = Ledger.schemaVersion + 1
        try ledger.database.writer.write { connection throws(StorageError) in
            try connection.query(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                [.integer(newer), .integer(1)]
            )
        }
        ledger.close()
        // The same ledger, opened by this release again: refused before anything is written.
        #expect(throws: StorageError.self) {
            _ =
                try url.map { try Ledger(postgres: PostgresTarget(url: $0, password: nil)) }
                ?? Ledger(directory: directory.path)
        }
        let environment = url.map { ["LINKOUT_DATABASE_URL": $0] } ?? [:]
        for command in [["serve", "--port", "0"], ["export"]] {
            let process = try LinkOutProcess(command + ["--data-dir", directory.path], environment: environment)
            #expect(process.waitForExit() == 2)
            let message = process.stderrText()
            #expect(message.contains("schema is version \(newer)"), "\(message)")
            #expect(message.contains("up to \(Ledger.schemaVersion)"), "\(message)")
        }
        let version = try LinkOutProcess(["--version"])
        #expect(version.waitForExit() == 0)
        #expect(version.stdoutText() == "linkout \(Release.version) (schema \(Ledger.schemaVersion))\n")
    }

    @Test func metricsCarryTheBuildInfo() throws {
        let live = try LiveApplication()
        let metrics = try live.get("/metrics").text
        #expect(
            metrics.contains(
                "linkout_build_info{version=\"\(Release.version)\",schema=\"\(Ledger.schemaVersion)\"} 1"
            ),
            "\(metrics.split(separator: "\n").filter { $0.contains("build_info") })"
        )
    }
}
