import Dispatch
import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Logging
import Synchronization
import TestSupport
import Testing

@testable import LinkOut
@testable import Storage

#if canImport(Glibc)
import Glibc
#endif

/// `linkout backup` and `linkout restore` of the SQLite ledger (PostgreSQL has its own tools:
/// `PostgresDumpTests`), and what a restored ledger reports to Apple.
@Suite("Backup and restore")
struct BackupRestoreTests {
    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-backup-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A ledger file as the release of schema `version` left it (a backup an earlier release made).
    static func ledger(at path: String, schema version: Int64) throws {
        try Migrations.apply(to: try SQLiteConnection(path: path), dialect: .sqlite, now: 1, upTo: version)
    }

    /// Landings from four clients until stopped, each acknowledged one recorded.
    final class Flood: Sendable {
        let acknowledged = Mutex<[String]>([])
        let stopped = Atomic<Bool>(false)
        let done = DispatchGroup()

        init(port: Int) {
            for _ in 0..<4 {
                done.enter()
                Thread.detachNewThread { [self] in
                    defer { done.leave() }
                    guard let client = try? RawClient(port: port) else { return }
                    for _ in 0..<5_000 where !stopped.load(ordering: .relaxed) {
                        let token = TokenMinter.mint(
                            bundleId: "com.example",
                            appAppleId: 1_234_567_890,
                            sandbox: false,
                            tokenType: nil,
                            nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000)
                        )
                        let target = "/?externalPurchaseToken=\(TokenMinter.encode(token))&bundleId=com.example"
                        guard let response = try? client.roundTrip("GET \(target) HTTP/1.1\r\nHost: t\r\n\r\n"),
                            response.status == 303
                        else { return }
                        acknowledged.withLock { $0.append(token.externalPurchaseId.rawValue) }
                    }
                }
            }
        }

        var count: Int { acknowledged.withLock { $0.count } }

        /// Stops the clients; true once they all have.
        func stop() -> Bool {
            stopped.store(true, ordering: .relaxed)
            return done.wait(timeout: .now() + 60) == .success
        }
    }

    @Test func aBackupUnderLandingsHoldsEveryLandingAcknowledgedBeforeItAndTheServerStartsOnIt() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let dataDir = directory.appendingPathComponent("data").path
        let server = try LinkOutProcess(
            ["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", dataDir],
            directory: LiveApplication.repositoryRoot,
            environment: ["LINKOUT_RATE_LIMIT_PER_SECOND": "0"]
        )
        defer { server.signal(SIGTERM) }
        let port = try server.waitForPort()
        let flood = Flood(port: port)
        defer { _ = flood.stop() }
        // Polls progress; not a race guard.
        #expect(eventually(within: 60) { flood.count >= 1_000 })
        let before = Set(flood.acknowledged.withLock { $0 })
        let file = directory.appendingPathComponent("ledger.backup").path
        let backup = try LinkOutProcess(["backup", "--to", file, "--data-dir", dataDir])
        #expect(backup.waitForExit() == 0, "\(backup.stderrText())")
        #expect(flood.stop())
        #expect(backup.stdoutText().contains("backup written"))
        let during = flood.count - before.count
        #expect(during > 0, "the landings went on while the backup ran")

        let restoredDir = directory.appendingPathComponent("restored").path
        let restore = try LinkOutProcess(["restore", "--from", file, "--data-dir", restoredDir])
        #expect(restore.waitForExit() == 0, "\(restore.stderrText())")
        do {
            let ledger = try Ledger(directory: restoredDir)
            defer { ledger.close() }
            let stored = Set(try ledger.tokens.tokens().map(\.token.externalPurchaseId.rawValue))
            let missing = before.subtracting(stored)
            #expect(missing.isEmpty, "\(missing.count) of \(before.count) landings acknowledged before the backup")
            #expect(try ledger.settings.setting(named: RestoreDoubt.setting) != nil)
            // The restore is in the restored ledger's own audit trail: who, from which file.
            let restoreEntry = try ledger.audit.entries(limit: 10).first { $0.action == "restore" }
            #expect(restoreEntry?.after?.contains(file) == true, "\(String(describing: restoreEntry))")
            #expect(restoreEntry?.actor.hasPrefix("cli:") == true)
        }
        let restored = try LinkOutProcess(
            ["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", restoredDir],
            directory: LiveApplication.repositoryRoot
        )
        let restoredPort = try restored.waitForPort()
        #expect(try RawClient(port: restoredPort).roundTrip("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        restored.signal(SIGTERM)
        #expect(restored.waitForExit() == 0, "\(restored.stderrText())")
        print("backup under landings: \(before.count) acknowledged before it, \(during) during it, none lost")
    }

    /// A new ledger in `directory/data` and its backup in `directory/ledger.backup`.
    static func backupOfANewLedger(in directory: URL) throws -> (dataDir: String, file: String, bytes: Int64) {
        let dataDir = directory.appendingPathComponent("data").path
        try Ledger(directory: dataDir).close()
        let file = directory.appendingPathComponent("ledger.backup").path
        return (dataDir, file, try LedgerBackup.backup(directory: dataDir, to: file).bytes)
    }

    /// Two backups to one name at once: the second is refused while the first holds its partial file (it removed
    /// the first one's copy, and one of them then published an empty ledger, or nothing); a partial file a killed
    /// run left is taken over; a name published by another run meanwhile is never written over.
    @Test func oneBackupToANameAtATime() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let dataDir = directory.appendingPathComponent("data").path
        try Ledger(directory: dataDir).close()
        let file = directory.appendingPathComponent("ledger.backup").path
        do {
            let running = try PartialBackupFile(for: file)
            let refused = #expect(throws: StorageError.self) {
                _ = try LedgerBackup.backup(directory: dataDir, to: file)
            }
            #expect(refused?.code == .conflict)
            #expect(
                refused?.message.contains("another backup to \(file) is under way") == true,
                "\(String(describing: refused))"
            )
            #expect(FileManager.default.fileExists(atPath: running.path))
            #expect(!FileManager.default.fileExists(atPath: file))
        }
        // The run that held it is gone, as a killed one is: its file is taken over.
        try Data("left by a killed backup".utf8).write(to: URL(fileURLWithPath: file + ".partial"))
        #expect(try LedgerBackup.backup(directory: dataDir, to: file).bytes > 0)
        #expect(!FileManager.default.fileExists(atPath: file + ".partial"))
        _ = try LedgerBackup.verify(file)

        // Into a folder that is not there: said as such, and nothing is left behind.
        let nowhere = directory.appendingPathComponent("missing/x.backup").path
        let missing = #expect(throws: StorageError.self) {
            _ = try LedgerBackup.backup(directory: dataDir, to: nowhere)
        }
        #expect(
            missing?.message.contains("there is no folder \(directory.path)/missing") == true,
            "\(String(describing: missing))"
        )
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("missing").path))

        let other = directory.appendingPathComponent("other.backup").path
        let partial = try PartialBackupFile(for: other)
        try Data("published meanwhile".utf8).write(to: URL(fileURLWithPath: other))
        let overwrite = #expect(throws: StorageError.self) { try partial.publish(as: other) }
        #expect(overwrite?.code == .conflict)
        #expect(try String(contentsOfFile: other, encoding: .utf8) == "published meanwhile")
    }

    @Test func aRestoreChecksTheFileAndNeverReplacesALedgerUnasked() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (dataDir, file, _) = try Self.backupOfANewLedger(in: directory)
        // Never over an existing file.
        #expect(throws: StorageError.self) { _ = try LedgerBackup.backup(directory: dataDir, to: file) }
        // Not into a folder that holds a ledger, unless told.
        let refused = try LinkOutProcess(["restore", "--from", file, "--data-dir", dataDir])
        #expect(refused.waitForExit() == 1)
        #expect(refused.stderrText().contains("is not empty"))
        // Never under a running server, even when told.
        do {
            let running = try Ledger(directory: dataDir)
            defer { running.close() }
            let underServer = try LinkOutProcess(["restore", "--from", file, "--data-dir", dataDir, "--force"])
            #expect(underServer.waitForExit() == 1)
            // Unforced, the server is what is said first: `--force` would be refused too.
            let unforced = try LinkOutProcess(["restore", "--from", file, "--data-dir", dataDir])
            #expect(unforced.waitForExit() == 1)
            let said = unforced.stderrText()
            #expect(said.contains("is using the data folder") && !said.contains("--force"), "\(said)")
        }
        // Never the folder's own ledger onto itself (it would be gone before it was copied).
        let onto = try LinkOutProcess([
            "restore", "--from", dataDir + "/linkout.sqlite", "--data-dir", dataDir, "--force",
        ])
        #expect(onto.waitForExit() == 1)
        #expect(FileManager.default.fileExists(atPath: dataDir + "/linkout.sqlite"))
        // A ledger at an older schema is backed up by the release that runs it, never migrated in the copy.
        let older = directory.appendingPathComponent("older").path
        try FileManager.default.createDirectory(atPath: older, withIntermediateDirectories: true)
        try Self.ledger(at: older + "/linkout.sqlite", schema: Ledger.schemaVersion - 1)
        #expect(throws: StorageError.self) { _ = try LedgerBackup.backup(directory: older, to: older + ".backup") }
        let forced = try LinkOutProcess(["restore", "--from", file, "--data-dir", dataDir, "--force"])
        #expect(forced.waitForExit() == 0, "\(forced.stderrText())")
        // What was erased after the backup is back: the restore says so.
        #expect(forced.stdoutText().contains("what was erased after the backup is back"))
        // Not a SQLite file, or a damaged one.
        let garbage = directory.appendingPathComponent("garbage").path
        try Data("not a ledger".utf8).write(to: URL(fileURLWithPath: garbage))
        let notSQLite = try LinkOutProcess(["restore", "--from", garbage, "--data-dir", directory.path + "/g"])
        #expect(notSQLite.waitForExit() == 1)
        #expect(notSQLite.stderrText().contains("not a SQLite database"))
        // A pipe or a folder given as the backup is refused at once (opening a pipe waited for ever).
        let pipe = directory.appendingPathComponent("pipe").path
        #expect(mkfifo(pipe, 0o600) == 0)
        for notAFile in [pipe, directory.path] {
            let refused = try LinkOutProcess(["restore", "--from", notAFile, "--data-dir", directory.path + "/p"])
            #expect(refused.waitForExit() == 1)
            #expect(refused.stderrText().contains("is not a file"), "\(refused.stderrText())")
        }
        // A backup never replaces what is at its path, a link to nothing included.
        let dangling = directory.appendingPathComponent("dangling").path
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: directory.path + "/nowhere/x")
        #expect(throws: StorageError.self) { _ = try LedgerBackup.backup(directory: dataDir, to: dangling) }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dangling) == directory.path + "/nowhere/x")
        // An empty file, or another program's database: not a ledger, said so (not a missing table).
        let empty = directory.appendingPathComponent("empty.sqlite").path
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        let other = directory.appendingPathComponent("other.sqlite").path
        try SQLiteConnection(path: other).execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        for (index, foreign) in [empty, other].enumerated() {
            let refused = try LinkOutProcess([
                "restore", "--from", foreign, "--data-dir", directory.path + "/o\(index)",
            ])
            #expect(refused.waitForExit() == 1)
            #expect(refused.stderrText().contains("is not a linkout ledger or backup"), "\(refused.stderrText())")
            #expect(!refused.stderrText().contains("\(foreign): \(foreign)"), "named once: \(refused.stderrText())")
        }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        for offset in stride(from: 4096 * 3, to: min(bytes.count, 4096 * 12), by: 97) { bytes[offset] ^= 0x5A }
        let damaged = directory.appendingPathComponent("damaged").path
        try bytes.write(to: URL(fileURLWithPath: damaged))
        #expect(throws: StorageError.self) { _ = try LedgerBackup.verify(damaged) }
        // SQLite's words name no file: the refusal does.
        do {
            _ = try LedgerBackup.verify(damaged)
        } catch {
            #expect(error.message.hasPrefix(damaged), "\(error)")
        }
        // A backup a newer release made: exit 2 with both schema versions.
        let newer = directory.appendingPathComponent("newer").path
        try FileManager.default.copyItem(atPath: file, toPath: newer)
        try SQLiteConnection(path: newer).query(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?, 1)",
            [.integer(Ledger.schemaVersion + 1)]
        )
        let tooNew = try LinkOutProcess(["restore", "--from", newer, "--data-dir", directory.path + "/n"])
        #expect(tooNew.waitForExit() == 2)
        #expect(tooNew.stderrText().contains("version \(Ledger.schemaVersion + 1)"))
        // An empty path is a usage error (exit 2), as an empty --data-dir is, not a failed copy.
        let emptyPaths = [
            ["backup", "--to", "", "--data-dir", dataDir],
            ["restore", "--from", "", "--data-dir", directory.path + "/e"],
        ]
        for arguments in emptyPaths {
            #expect(try LinkOutProcess(arguments).waitForExit() == 2, "\(arguments)")
        }
    }

    /// A restore into an empty folder that fails midway (here the disk fills while the copy is written) leaves
    /// the folder empty, so trying again needs no `--force`.
    @Test func aRestoreThatFailsLeavesTheEmptyFolderEmpty() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, file, bytes) = try Self.backupOfANewLedger(in: directory)
        let disk = try SmallFilesystem(bytes: 64 << 10)
        defer { disk.unmount() }
        #expect(bytes > 64 << 10)
        let target = disk.path + "/data"
        #expect(throws: StorageError.self) { _ = try LedgerBackup.restore(from: file, into: target, replacing: false) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: target) == [])
    }

    /// A backup onto a full disk fails naming that disk, not the data folder's (which the CLI's advice for a full
    /// disk names otherwise), and leaves nothing half-written there.
    @Test func aBackupOntoAFullDiskNamesThatDisk() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (dataDir, _, bytes) = try Self.backupOfANewLedger(in: directory)
        let disk = try SmallFilesystem(bytes: 64 << 10)
        defer { disk.unmount() }
        #expect(bytes > 64 << 10)
        let target = disk.path + "/ledger.backup"
        #expect {
            _ = try LedgerBackup.backup(directory: dataDir, to: target)
        } throws: { error in
            let error = error as? StorageError
            return error?.code == .diskFull && error?.remedy?.contains("free space on the disk of \(disk.path)") == true
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == [])
    }

    /// A data folder holding a copy of `file` whose audit log's delete trigger does nothing.
    static func rewrittenTrigger(of file: String) throws -> String {
        let folder = (file as NSString).deletingLastPathComponent + "/quiet-\(UUID())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: file, toPath: folder + "/linkout.sqlite")
        try SQLiteConnection(path: folder + "/linkout.sqlite").execute(
            "DROP TRIGGER audit_log_no_delete; "
                + "CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT 1; END"
        )
        return folder
    }

    /// A backup edited by hand passes SQLite's integrity check and names its schema, but lacks what that schema
    /// has: a table the server stops on, the triggers that keep the audit log as it was written. It is refused,
    /// naming what it lacks, and the empty folder stays empty; `linkout check` names it in a data folder.
    @Test func aBackupLackingPartsOfItsSchemaIsRefusedAndTheCheckSaysSo() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (dataDir, file, _) = try Self.backupOfANewLedger(in: directory)
        #expect(try Ledger.missingSchema(directory: dataDir) == nil)
        // A trigger rewritten to do nothing is as good as none.
        let quiet = try Self.rewrittenTrigger(of: file)
        #expect(try Ledger.missingSchema(directory: quiet) == "trigger audit_log_no_delete as written")
        try SQLiteConnection(path: file).execute(
            "DROP TRIGGER audit_log_no_update; DROP TRIGGER audit_log_no_delete; DROP TABLE reports; "
                + "ALTER TABLE tokens DROP COLUMN raw_token"
        )
        let target = directory.appendingPathComponent("restored").path
        let refusal = #expect(throws: StorageError.self) {
            _ = try LedgerBackup.restore(from: file, into: target, replacing: false)
        }
        let message = refusal?.message ?? ""
        #expect(message.contains("is not a whole ledger at schema \(Ledger.schemaVersion)"))
        #expect(message.contains("trigger audit_log_no_delete") && message.contains("table reports"))
        #expect(message.contains("1 more"))
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: target)) ?? []) == [])
        // The same file as a data folder's ledger: the check fails on it, naming what it lacks.
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: file, toPath: target + "/linkout.sqlite")
        #expect(try Ledger.missingSchema(directory: target)?.hasSuffix("table reports and 1 more") == true)
        var configuration = Configuration()
        configuration.storage.dataDir = target
        let ledger = PreflightCheck(configuration: configuration).ledger()
        #expect(!ledger.passed && ledger.detail.contains("lacks") && ledger.detail.contains("restore a backup"))
    }

    /// A ledger `restore` would refuse (a trigger rewritten by hand) is backed up all the same, the copy of its
    /// data, with what it lacks named: the backup said nothing, and the restore refused the file too late to take
    /// another.
    @Test func aBackupThatWouldNotRestoreSaysWhatItLacks() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (dataDir, file, _) = try Self.backupOfANewLedger(in: directory)
        #expect(try LedgerBackup.backup(directory: dataDir, to: file + ".whole").lacks == nil)
        let quiet = try Self.rewrittenTrigger(of: file)
        let target = directory.appendingPathComponent("of-quiet.sqlite").path
        let summary = try LedgerBackup.backup(directory: quiet, to: target)
        #expect(summary.lacks == "trigger audit_log_no_delete as written")
        #expect(FileManager.default.fileExists(atPath: target))
        #expect(throws: StorageError.self) { _ = try LedgerBackup.verify(target) }
        // The command says so and fails, the file kept.
        let command = try LinkOutProcess(["backup", "--to", target + ".2", "--data-dir", quiet])
        #expect(command.waitForExit() == 1)
        #expect(command.stderrText().contains("refuses this backup"), "\(command.stderrText())")
        #expect(FileManager.default.fileExists(atPath: target + ".2"))
    }

    /// A killed server's data folder, copied and restored from its `linkout.sqlite`: the visits its journal
    /// acknowledged and its tables do not hold yet come along. A restore killed part-way into an empty folder
    /// leaves its copy and lock file, which the next try ignores: no `--force` needed.
    @Test func aRestoreFromACopiedFolderBringsItsJournalAndACutShortOneIsTriedAgain() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let copied = directory.appendingPathComponent("copied").path
        do {
            let ledger = try Ledger(directory: copied)
            ledger.close()
        }
        func visit(_ id: String) -> Visit {
            let token = ExternalPurchaseToken(
                appAppleId: 1_234_567_890,
                bundleId: "com.example",
                tokenCreationDate: 1_706_169_600_000,
                externalPurchaseId: ExternalPurchaseID(id)
            )
            return Visit(
                token: TokenFields(token, source: .url),
                checkoutId: CheckoutID("c-" + id),
                bundleId: "com.example",
                landingPath: "/",
                utm: [:],
                at: 1_000
            )
        }
        // As a kill -9 leaves them: acknowledged (on disk in a segment), not in the tables.
        let records =
            JournalCoding.encode(visit("journaled-1"), sequence: 1)
            + JournalCoding.encode(visit("journaled-2"), sequence: 2)
        try Data(records).write(to: URL(fileURLWithPath: VisitJournal.segmentPath(in: copied, first: 1)))

        let target = directory.appendingPathComponent("restored").path
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        // What a restore killed part-way leaves behind.
        try Data("half a copy".utf8).write(to: URL(fileURLWithPath: target + "/linkout.sqlite.partial"))
        try Data().write(to: URL(fileURLWithPath: target + "/" + VisitJournal.lockFileName))
        let summary = try LedgerBackup.restore(from: copied + "/linkout.sqlite", into: target, replacing: false)
        #expect(summary.journaledVisits == 2)
        #expect(!FileManager.default.fileExists(atPath: target + "/linkout.sqlite.partial"))
        let restored = try Ledger(directory: target)
        defer { restored.close() }
        #expect(try Set(restored.tokens.tokens().map(\.token.externalPurchaseId)) == ["journaled-1", "journaled-2"])

        // A rollback from a copied folder of an earlier release, stopped cleanly: its last segment holds visits
        // its tables have (`journal_applied`), and nothing is missing; one past it is, and cannot be applied at
        // that schema, so the restore says what to do instead.
        let older = directory.appendingPathComponent("older").path
        try FileManager.default.createDirectory(atPath: older, withIntermediateDirectories: true)
        try Self.ledger(at: older + "/linkout.sqlite", schema: Ledger.schemaVersion - 1)
        try SQLiteConnection(path: older + "/linkout.sqlite").query(
            "INSERT INTO settings (name, value) VALUES ('journal_applied', '2')"
        )
        try Data(records).write(to: URL(fileURLWithPath: VisitJournal.segmentPath(in: older, first: 1)))
        let kept = try LedgerBackup.restore(
            from: older + "/linkout.sqlite",
            into: directory.appendingPathComponent("kept").path,
            replacing: false,
            keepSchema: true
        )
        #expect(kept.journaledVisits == 0 && kept.schemaVersion == Ledger.schemaVersion - 1)
        let later = JournalCoding.encode(visit("journaled-3"), sequence: 3)
        try Data(later).write(to: URL(fileURLWithPath: VisitJournal.segmentPath(in: older, first: 3)))
        #expect {
            _ = try LedgerBackup.restore(
                from: older + "/linkout.sqlite",
                into: directory.appendingPathComponent("refused").path,
                replacing: false,
                keepSchema: true
            )
        } throws: { error in
            (error as? StorageError)?.code == .olderSchema
                && (error as? StorageError)?.message.contains("1 visit(s) not in its ledger") == true
        }
    }

    /// A rollback: the backup an earlier release made, put back as it is (`--keep-schema`) for that release to run;
    /// without the flag the copy is upgraded for this one. The restore is in the ledger's audit log when its schema
    /// has one.
    @Test func aRestoreForARollbackKeepsTheBackupsSchema() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let older = directory.appendingPathComponent("older.sqlite").path
        try Self.ledger(at: older, schema: Ledger.schemaVersion - 1)
        let kept = directory.appendingPathComponent("kept").path
        let rollback = try LinkOutProcess(["restore", "--from", older, "--data-dir", kept, "--keep-schema"])
        #expect(rollback.waitForExit() == 0, "\(rollback.stderrText())")
        #expect(rollback.stdoutText().contains("schema \(Ledger.schemaVersion - 1) (kept as the backup had it)"))
        let keptLedger = try SQLiteConnection(path: kept + "/linkout.sqlite", readOnly: true)
        #expect(try LedgerBackup.schemaVersion(keptLedger) == Ledger.schemaVersion - 1)
        #expect(try keptLedger.query("SELECT action FROM audit_log").compactMap { $0.first?.text } == ["restore"])
        // This release's tools leave it for the release that made it.
        let export = try LinkOutProcess(["export", "--data-dir", kept])
        #expect(export.waitForExit() == 2)
        let upgraded = directory.appendingPathComponent("upgraded").path
        let restore = try LinkOutProcess(["restore", "--from", older, "--data-dir", upgraded])
        #expect(restore.waitForExit() == 0, "\(restore.stderrText())")
        let upgradedLedger = try SQLiteConnection(path: upgraded + "/linkout.sqlite", readOnly: true)
        #expect(try LedgerBackup.schemaVersion(upgradedLedger) == Ledger.schemaVersion)
        #expect(try upgradedLedger.query("SELECT action FROM audit_log").compactMap { $0.first?.text } == ["restore"])

        // Back to a release from before credentials, keys and the audit log (schema 23), over a ledger that
        // revoked a credential: nothing of those to keep, and the restore says it is not in an audit log.
        do {
            let current = try Ledger(directory: kept + "-current")
            defer { current.close() }
            try current.database.writer.write { connection throws(StorageError) in
                try connection.query(
                    """
                    INSERT INTO customer_credentials (id, secret_hash, bundle_id, created_at, revoked_at)
                    VALUES ('cred_1', 'hash_1', 'com.example', 1, 2)
                    """
                )
            }
        }
        let ancient = directory.appendingPathComponent("schema23.sqlite").path
        try Self.ledger(at: ancient, schema: 23)
        let back = try LinkOutProcess([
            "restore", "--from", ancient, "--data-dir", kept + "-current", "--force", "--keep-schema",
        ])
        #expect(back.waitForExit() == 0, "\(back.stderrText())")
        #expect(back.stdoutText().contains("schema 23 (kept as the backup had it)"), "\(back.stdoutText())")
        #expect(back.stdoutText().contains("0 credential revocation(s)"))
        #expect(back.stdoutText().contains("not in the audit log"))
        let ancientLedger = try SQLiteConnection(path: kept + "-current/linkout.sqlite", readOnly: true)
        #expect(try LedgerBackup.schemaVersion(ancientLedger) == 23)
    }

    /// A key made after the backup is kept only from the same installation: a restore over another
    /// installation's ledger (a staging copy) never takes its keys, nor a key that would start signing at the
    /// same moment as one the backup has, nor its audit trail (entries about purchases this one never had).
    @Test func aRestoreTakesNoSigningKeyOrAuditEntryOfAnotherInstallation() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let dataDir = directory.appendingPathComponent("data").path
        let file = directory.appendingPathComponent("ledger.backup").path
        do {
            let ledger = try Ledger(directory: dataDir)
            defer { ledger.close() }
            _ = try ledger.settings.secret(named: "identifiers")
            let key = SigningKeyRecord(kid: "k1", publicJWK: "{}", privateKeyPEM: "pem", createdAt: 1, signsFrom: 1)
            #expect(try ledger.signingKeys.insert(key))
            _ = try LedgerBackup.backup(directory: dataDir, to: file)
            // Then the folder holds another installation's ledger (its own secret), with a key of its own, and
            // one starting at the same moment as the backup's.
            try ledger.database.writer.write { connection throws(StorageError) in
                try connection.query("UPDATE settings SET value = 'another' WHERE name = 'identifiers'")
            }
            for (kid, from) in [("staging", Int64(50)), ("same-start", 1)] {
                let other = SigningKeyRecord(
                    kid: kid,
                    publicJWK: "{}",
                    privateKeyPEM: "staging-pem",
                    createdAt: 40,
                    signsFrom: from
                )
                #expect(try ledger.signingKeys.insert(other))
            }
            try ledger.audit.append(
                AuditEntry(at: 60, actor: "cli:ops", origin: "local", action: "demo.refund", subject: "demo_other")
            )
        }
        let restore = try LinkOutProcess(["restore", "--from", file, "--data-dir", dataDir, "--force"])
        #expect(restore.waitForExit() == 0, "\(restore.stderrText())")
        #expect(restore.stdoutText().contains("0 signing key(s)"), "\(restore.stdoutText())")
        #expect(restore.stdoutText().contains("0 audit entr(ies) made after the backup (the replaced ledger was"))
        let restored = try Ledger(directory: dataDir)
        defer { restored.close() }
        #expect(try restored.signingKeys.keys(includingRetired: true).map(\.kid) == ["k1"])
        #expect(try restored.audit.entries().map(\.action) == ["restore"])
    }

    /// A leak answered after the backup stays answered: restoring the backup over the ledger keeps the
    /// replaced ledger's credential revocations and key retirements.
    @Test func aRestoreKeepsTheRevocationsOfTheLedgerItReplaces() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let dataDir = directory.appendingPathComponent("data").path
        let file = directory.appendingPathComponent("ledger.backup").path
        do {
            let ledger = try Ledger(directory: dataDir)
            defer { ledger.close() }
            let key = SigningKeyRecord(kid: "k1", publicJWK: "{}", privateKeyPEM: "pem", createdAt: 1, signsFrom: 1)
            #expect(try ledger.signingKeys.insert(key))
            try ledger.database.writer.write { connection throws(StorageError) in
                try connection.query(
                    """
                    INSERT INTO customer_credentials (id, secret_hash, bundle_id, created_at)
                    VALUES ('cred_1', 'hash_1', 'com.example', 1)
                    """
                )
            }
            try ledger.audit.append(AuditEntry(at: 4_000, actor: "cli:ops", origin: "local", action: "keys.list"))
            _ = try LedgerBackup.backup(directory: dataDir, to: file)
            // After the backup: the credential leaks and is revoked, the key is retired, and the log says by whom.
            #expect(try ledger.credentials.revoke(id: "cred_1", at: 5_000) != nil)
            #expect(try ledger.signingKeys.retire(kid: "k1", at: 6_000))
            // A rotation after the backup: entitlements signed with the new key must still verify once restored.
            let rotated = SigningKeyRecord(
                kid: "k2",
                publicJWK: #"{"kty":"EC"}"#,
                privateKeyPEM: "pem2",
                createdAt: 5_500,
                signsFrom: 5_600
            )
            #expect(try ledger.signingKeys.insert(rotated))
            // An account erased, and the new key's signing noted: later events keep saying `[erased]`, and a
            // retirement of k2 waits for what it signed.
            try ledger.privacy.markErased(accountKey: "erased-account-key", at: 5_700)
            try ledger.signingKeys.recordSigning(kid: "k2", lifetimeSeconds: 86_400, at: 5_800)
            for (at, action, subject) in [(5_000, "credential.revoke", "cred_1"), (6_000, "signing_key.retire", "k1")] {
                try ledger.audit.append(
                    AuditEntry(at: Int64(at), actor: "cli:ops", origin: "local", action: action, subject: subject)
                )
            }
        }
        let restore = try LinkOutProcess(["restore", "--from", file, "--data-dir", dataDir, "--force"])
        #expect(restore.waitForExit() == 0, "\(restore.stderrText())")
        #expect(
            restore.stdoutText().contains(
                "1 credential revocation(s), 1 key retirement(s), 1 signing key(s), 1 erased account(s), 2 audit "
                    + "entr(ies) made after the backup"
            ),
            "\(restore.stdoutText())"
        )
        do {
            let restored = try Ledger(directory: dataDir)
            defer { restored.close() }
            #expect(try restored.credentials.credential(id: "cred_1")?.revokedAt == 5_000)
            #expect(try restored.signingKeys.keys(includingRetired: true).first { $0.kid == "k1" }?.retiredAt == 6_000)
            let carried = try restored.signingKeys.keys(includingRetired: true).first { $0.kid == "k2" }
            #expect(carried?.privateKeyPEM == "pem2" && carried?.signsFrom == 5_600 && carried?.retiredAt == nil)
            #expect(try restored.privacy.isErased(accountKey: "erased-account-key"))
            let signing = try restored.signingKeys.signing(kid: "k2")
            #expect(signing.longestLifetimeSeconds == 86_400 && signing.lastSignedAt == 5_800)
            // Oldest first: the entry the backup held, the two carried, then the restore's own.
            let actions = try restored.audit.entries().reversed().map(\.action)
            #expect(actions == ["keys.list", "credential.revoke", "signing_key.retire", "restore"], "\(actions)")
        }

        // A replaced ledger whose credentials cannot be read: what can be read is kept, and the restore says to
        // redo the rest by hand.
        let ledgerFile = dataDir + "/linkout.sqlite"
        let root = try #require(
            try SQLiteConnection(path: ledgerFile, readOnly: true).query(
                "SELECT rootpage FROM sqlite_master WHERE name = 'customer_credentials'"
            ).first?.first?.integer
        )
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: ledgerFile))
        try handle.seek(toOffset: UInt64(root - 1) * 4096)
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 4096))
        try handle.close()
        let damaged = try LinkOutProcess(["restore", "--from", file, "--data-dir", dataDir, "--force"])
        #expect(damaged.waitForExit() == 0, "\(damaged.stderrText())")
        let said = damaged.stdoutText()
        // The log carried: the revocation, the retirement and the first restore.
        #expect(
            said.contains(
                "1 key retirement(s), 1 signing key(s), 1 erased account(s), 3 audit entr(ies) made after the backup "
                    + "(the rest could not be read)"
            ),
            "\(said)"
        )
        #expect(said.contains("revoke again (linkout credentials revoke ID)"), "\(said)")
        let restored = try Ledger(directory: dataDir)
        defer { restored.close() }
        #expect(try restored.signingKeys.keys(includingRetired: true).first { $0.kid == "k1" }?.retiredAt == 6_000)
    }

    /// A copy of a data folder made while its ledger was open (a snapshot, or files copied from a stopped
    /// server that never checkpointed) has its latest writes in `linkout.sqlite-wal` only: a restore takes them too.
    /// The same ledger however spelled is refused, and a ledger replaced on `--force` is set aside, not deleted.
    @Test func aRestoreTakesTheWALBesideTheFileAndSetsTheReplacedLedgerAside() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let dataDir = directory.appendingPathComponent("data").path
        let snapshot = directory.appendingPathComponent("snapshot").path
        let alone = directory.appendingPathComponent("alone").path
        for folder in [snapshot, alone] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let secret: String
        do {
            let ledger = try Ledger(directory: dataDir)
            defer { ledger.close() }
            secret = try ledger.settings.secret(named: "identifiers")
            try ledger.database.writer.write { connection throws(StorageError) in
                try connection.query(
                    "INSERT INTO admin_sessions (session_key, expires_at) VALUES ('signed-in', 9999999999999)"
                )
            }
            for name in ["linkout.sqlite", "linkout.sqlite-wal"] {
                try FileManager.default.copyItem(atPath: dataDir + "/" + name, toPath: snapshot + "/" + name)
            }
            try FileManager.default.copyItem(atPath: dataDir + "/linkout.sqlite", toPath: alone + "/linkout.sqlite")
        }
        // The scenario: the main file alone does not hold the secret yet.
        let withoutWAL = try? SQLiteConnection(path: alone + "/linkout.sqlite", readOnly: true).query(
            "SELECT value FROM settings WHERE name = 'identifiers'"
        )
        #expect(withoutWAL?.isEmpty ?? true)

        let restoredDir = directory.appendingPathComponent("restored").path
        _ = try LedgerBackup.restore(from: snapshot + "/linkout.sqlite", into: restoredDir, replacing: false)
        do {
            let restored = try Ledger(directory: restoredDir)
            defer { restored.close() }
            #expect(try restored.settings.secret(named: "identifiers") == secret)
            // A sign-in the backup holds may have been signed out since: none comes back.
            let sessions = try restored.database.readers.read { connection throws(StorageError) in
                try connection.query("SELECT count(*) FROM admin_sessions").first?.first?.integer
            }
            #expect(sessions == 0)
        }
        var mode = stat()
        #expect(stat(restoredDir + "/linkout.sqlite", &mode) == 0)
        #expect(mode.st_mode & 0o077 == 0, "the ledger is readable by its owner only")

        // The folder's own ledger, spelled otherwise, is still itself.
        for spelling in [restoredDir + "/../restored/linkout.sqlite", restoredDir + "/./linkout.sqlite"] {
            #expect(throws: StorageError.self) {
                _ = try LedgerBackup.restore(from: spelling, into: restoredDir, replacing: true)
            }
        }
        // Replaced on request: the ledger that was there is kept whole beside the new one, with its journal.
        let segment = VisitJournal.segmentPath(in: restoredDir, first: 1)
        let journaled = Data("visits the replaced ledger acknowledged".utf8)
        try journaled.write(to: URL(fileURLWithPath: segment))
        _ = try LedgerBackup.restore(from: snapshot + "/linkout.sqlite", into: restoredDir, replacing: true)
        #expect(!FileManager.default.fileExists(atPath: segment), "the replaced journal is not replayed onto the copy")
        let asides = try FileManager.default.contentsOfDirectory(atPath: restoredDir).filter {
            $0.hasPrefix("replaced-")
        }
        #expect(asides.count == 1)
        let keptSegment = restoredDir + "/" + (asides.first ?? "") + "/" + (segment as NSString).lastPathComponent
        #expect(FileManager.default.contents(atPath: keptSegment) == journaled)
        let aside = try SQLiteConnection(
            path: restoredDir + "/" + (asides.first ?? "") + "/linkout.sqlite",
            readOnly: true
        )
        #expect(try aside.query("SELECT value FROM settings WHERE name = 'identifiers'").first?.first?.text == secret)
        // A damaged ledger, the usual reason to restore, is replaced too, and kept as it was.
        let damaged = Data("not a ledger any more".utf8)
        try FileManager.default.removeItem(atPath: restoredDir + "/" + (asides.first ?? ""))
        try damaged.write(to: URL(fileURLWithPath: restoredDir + "/linkout.sqlite"))
        _ = try LedgerBackup.restore(from: snapshot + "/linkout.sqlite", into: restoredDir, replacing: true)
        let kept = try FileManager.default.contentsOfDirectory(atPath: restoredDir).filter { $0.hasPrefix("replaced-") }
        #expect(kept.count == 1)
        #expect(
            FileManager.default.contents(atPath: restoredDir + "/" + (kept.first ?? "") + "/linkout.sqlite") == damaged
        )
        do {
            let restored = try Ledger(directory: restoredDir)
            defer { restored.close() }
            #expect(try restored.settings.secret(named: "identifiers") == secret)
        }
    }

    /// A backup from before a token was reported, restored after Apple accepted its report: the restored
    /// ledger plans the report again under the same identifier, asks Apple first, and finds it there, so Apple
    /// gets one report, not two. A token Apple never heard of is still sent.
    @Test func aRestoredLedgerNeverReportsTwiceWhatApplePossiblyHolds() throws {
        let harness = try ReportingHarness()
        // The installation's secret, made when a server first starts (`Application`), so every backup holds it.
        _ = try harness.ledger.settings.secret(named: "identifiers")
        try harness.record("reported-after-the-backup")
        harness.ledger.flush()
        let file = try harness.backUp()
        try harness.tickUntilSettled()
        #expect(try harness.reports("reported-after-the-backup").first?.state == .accepted)
        #expect(harness.production.received.count == 1)
        let sent = try #require(harness.production.received.first?.report?.requestIdentifier)

        let (ledger, service) = try harness.restored(from: file)
        defer { ledger.close() }
        try harness.record("new-after-the-restore", into: ledger)
        for _ in 0..<3 { service.tick() }
        let again = try #require(try ledger.reports.reports(for: "reported-after-the-backup").first)
        #expect(again.requestIdentifier == sent)
        #expect(again.state == .accepted)
        #expect(try ledger.reports.reports(for: "new-after-the-restore").first?.state == .accepted)
        let puts = harness.production.received.compactMap { $0.report?.externalPurchaseId }
        #expect(puts == ["reported-after-the-backup", "new-after-the-restore"])
        #expect(harness.production.retrieveCount == 2)
    }

    /// A report tried before the backup (Apple answered 500) and accepted after it: restored, it is pending with
    /// one attempt, and its next send asks Apple first as well. Before, only reports never tried were checked,
    /// and this one went to Apple a second time.
    @Test func aReportTriedBeforeTheBackupIsCheckedWithAppleAfterTheRestore() throws {
        let harness = try ReportingHarness()
        _ = try harness.ledger.settings.secret(named: "identifiers")
        try harness.record("tried-before-the-backup")
        harness.production.enqueue(.respond(status: 500))
        harness.service.tick()
        let tried = try #require(try harness.reports("tried-before-the-backup").first)
        #expect(tried.attempts == 1 && tried.state == .pending)
        harness.ledger.flush()
        let file = try harness.backUp()
        harness.service.tick(now: tried.nextAttemptAt)
        #expect(try harness.reports("tried-before-the-backup").first?.state == .accepted)
        #expect(harness.production.received.count == 2)

        let (ledger, service) = try harness.restored(from: file)
        defer { ledger.close() }
        service.tick(now: max(tried.nextAttemptAt, Clock.system.nowMilliseconds()))
        #expect(try ledger.reports.reports(for: "tried-before-the-backup").first?.state == .accepted)
        #expect(harness.production.received.count == 2, "no second send of what Apple holds")
        #expect(harness.production.retrieveCount == 1)
    }

    /// After a restore, a send whose answer was lost (a timeout: Apple may hold the report all the same) asks
    /// Apple for its copy before the next send too, and finds it: Apple gets the report once.
    @Test func aSendWhoseAnswerWasLostAfterARestoreIsCheckedWithAppleFirst() throws {
        let harness = try ReportingHarness()
        _ = try harness.ledger.settings.secret(named: "identifiers")
        harness.ledger.flush()
        let file = try harness.backUp()
        let (ledger, service) = try harness.restored(from: file)
        defer { ledger.close() }
        try harness.record("answer-lost", into: ledger)
        // Apple takes the report and its answer never comes (longer than the request timeout).
        harness.production.enqueue(.hang(milliseconds: 3_000))
        service.tick()
        let lost = try #require(try ledger.reports.reports(for: "answer-lost").first)
        #expect(lost.state == .pending && lost.lastHTTPStatus == nil)
        service.tick(now: max(lost.nextAttemptAt, Clock.system.nowMilliseconds()))
        #expect(try ledger.reports.reports(for: "answer-lost").first?.state == .accepted)
        #expect(harness.production.received.count == 1, "no second send of what Apple holds")
        #expect(harness.production.retrieveCount == 2)
    }
}

extension ReportingHarness {
    /// The ledger backed up now; the backup's path.
    func backUp() throws -> String {
        let file = directory.appendingPathComponent("ledger.backup").path
        _ = try LedgerBackup.backup(directory: configuration.storage.dataDir, to: file)
        return file
    }

    /// `file` restored into a new folder: its ledger (the caller closes it) and a reporting service on it,
    /// sending to the same fake Apple.
    func restored(from file: String) throws -> (ledger: Ledger, service: ReportingService) {
        let folder = directory.appendingPathComponent("restored").path
        _ = try LedgerBackup.restore(from: file, into: folder, replacing: false)
        var restored = configuration
        restored.storage.dataDir = folder
        let ledger = try restored.storage.openLedger()
        let service = ReportingService(
            configuration: restored,
            ledger: ledger,
            logger: Logger(label: "test", level: .critical)
        )
        return (ledger, service)
    }
}
