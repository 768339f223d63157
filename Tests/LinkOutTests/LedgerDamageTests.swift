import Foundation
import Lifecycle
import TestSupport
import Testing

@testable import LinkOut
@testable import Storage

/// A ledger file with damaged pages (a failing disk): `linkout check` fails it, a backup says it is damaged (not
/// that a disk is full), and a server that meets the damage says so in `/readyz` and `/metrics`.
@Suite("Ledger damage")
struct LedgerDamageTests {
    @Test func aDamagedLedgerIsSaidAsSuchByCheckBackupAndReadyz() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-damage-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let now = Lifecycle.Clock.system.nowMilliseconds()
        var configuration: Configuration
        do {
            let live = try LiveApplication(dataDir: folder) { $0.storage.postgresURL = nil }
            for index in 0..<400 { try live.recordAppToken("damage-\(index)", now: now) }
            _ = live.ledger()
            configuration = live.application.configuration
        }
        #expect(PreflightCheck(configuration: configuration).ledger().passed)
        #expect(try Ledger.damage(directory: folder.path) == nil)

        // The tokens table's first page overwritten, as a failing disk would.
        let file = folder.appendingPathComponent("linkout.sqlite").path
        let (root, pageSize) = try {
            // What the WAL holds goes into the file first, or its copy of the page would be read instead.
            let connection = try SQLiteConnection(path: file)
            try connection.query("PRAGMA wal_checkpoint(TRUNCATE)")
            let root = try #require(
                try connection.query("SELECT rootpage FROM sqlite_master WHERE name = 'tokens'").first?.first?.integer
            )
            let size = try #require(try connection.query("PRAGMA page_size").first?.first?.integer)
            return (root, size)
        }()
        let handle = try #require(FileHandle(forWritingAtPath: file))
        try handle.seek(toOffset: UInt64((root - 1) * pageSize))
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(pageSize)))
        try handle.close()

        let check = PreflightCheck(configuration: configuration).ledger()
        #expect(!check.passed && check.detail.contains("is damaged (SQLite's quick check:"), "\(check.line)")
        let backupFile = folder.appendingPathComponent("backup.sqlite").path
        #expect {
            _ = try LedgerBackup.backup(directory: folder.path, to: backupFile)
        } throws: { error in
            "\(error)".contains("is damaged") && !"\(error)".contains("free space")
        }
        #expect(!FileManager.default.fileExists(atPath: backupFile))

        let live = try LiveApplication(dataDir: folder) {
            $0.storage.postgresURL = nil
            $0.adminToken = DashboardTests.adminToken
        }
        let list = try live.get("/admin/tokens", headers: ["Authorization": "Bearer \(DashboardTests.adminToken)"])
        #expect(list.status == 500)
        let readiness = try live.get("/readyz")
        #expect(
            readiness.text.contains("database: DAMAGED: SQLite found the ledger's file malformed"),
            "\(readiness.text)"
        )
        #expect(try live.get("/metrics").text.contains("linkout_ledger_damaged 1"))
    }
}
