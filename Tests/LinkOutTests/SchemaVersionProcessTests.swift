import Foundation
import LinkOut
import TestSupport
import Testing

@testable import Storage

#if canImport(Glibc)
import Glibc
#endif

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
        // What takes no arguments refuses one rather than ignoring it.
        for command in [["version", "extra"], ["help", "extra"]] {
            let refused = try LinkOutProcess(command)
            #expect(refused.waitForExit() == 2, "\(command)")
            #expect(refused.stderrText().contains("unexpected argument 'extra'"), "\(refused.stderrText())")
        }
    }

    /// A command of this release beside a ledger an earlier release runs (before an upgrade, or after a
    /// rollback) reads nothing and changes nothing: exit 2 with both versions, the ledger left at its schema.
    /// `linkout serve` upgrades it.
    @Test func aCommandNeverUpgradesALedgerAnEarlierReleaseRuns() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-older-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let older = Ledger.schemaVersion - 1
        try Migrations.apply(
            to: try SQLiteConnection(path: directory.path + "/linkout.sqlite"),
            dialect: .sqlite,
            now: 1,
            upTo: older
        )
        let version = { () throws -> Int64? in
            try SQLiteConnection(path: directory.path + "/linkout.sqlite", readOnly: true)
                .query("SELECT max(version) FROM schema_migrations").first?.first?.integer
        }
        let copy = directory.path + "/older.backup"
        for command in [["export"], ["audit"], ["report", "status"], ["keys", "list"], ["backup", "--to", copy]] {
            let process = try LinkOutProcess(command + ["--data-dir", directory.path])
            #expect(process.waitForExit() == 2, "\(command)")
            let message = process.stderrText()
            #expect(
                message.contains("schema is version \(older) and this release's \(Ledger.schemaVersion)"),
                "\(message)"
            )
            #expect(try version() == older, "\(command) upgraded the ledger")
        }
        let server = try LinkOutProcess(["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", directory.path])
        defer { server.signal(SIGTERM) }
        _ = try server.waitForPort()
        #expect(try version() == Ledger.schemaVersion)
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
