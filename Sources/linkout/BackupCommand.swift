import Foundation
import LinkOut
import Storage

/// `linkout backup --to PATH` and `linkout restore --from PATH --data-dir DIR [--force] [--keep-schema]`: the
/// SQLite ledger copied whole and consistent next to a running server, and put back (see `LedgerBackup`). On
/// PostgreSQL the database server's own tools do this (`pg_dump`, point-in-time recovery; README "Operating it").
enum BackupCommand {
    static func backup(_ arguments: [String]) throws -> Int32 {
        let (flags, _) = try CommandLineInterface.parseFlags(arguments, allowed: ["--to", "--data-dir", "--config"])
        guard let destination = flags["--to"], !destination.isEmpty else {
            throw CommandLineInterface.UsageError(description: "use 'linkout backup --to PATH'")
        }
        let configuration = try sqliteConfiguration(flags, command: "backup")
        let started = Date()
        let summary = try LedgerBackup.backup(directory: configuration.storage.dataDir, to: destination)
        CommandLineInterface.printOutput(
            "backup written: \(destination): schema \(summary.schemaVersion), \(summary.tokens) tokens (\(summary.journaledVisits) "
                + "visits from the journal), \(summary.bytes) bytes in \(seconds(since: started)) s\n"
        )
        // Restore refuses such a file: found out then, it was too late to take another. Kept, since it is a
        // copy of the data all the same.
        if let lacks = summary.lacks {
            CommandLineInterface.printError(
                "linkout backup: the ledger lacks \(lacks) (changed by hand), so `linkout restore` refuses this "
                    + "backup; keep it as a copy of the data, and see `linkout check`\n"
            )
            return 1
        }
        return 0
    }

    static func restore(_ arguments: [String]) throws -> Int32 {
        let (flags, _) = try CommandLineInterface.parseFlags(
            arguments,
            allowed: ["--from", "--data-dir", "--config"],
            switches: ["--force", "--keep-schema"]
        )
        guard let source = flags["--from"], !source.isEmpty, flags["--data-dir"] != nil else {
            throw CommandLineInterface.UsageError(
                description: "use 'linkout restore --from PATH --data-dir DIR [--force] [--keep-schema]'"
            )
        }
        let configuration = try sqliteConfiguration(flags, command: "restore")
        let started = Date()
        let ledgerPath = (configuration.storage.dataDir as NSString).appendingPathComponent("linkout.sqlite")
        let replaced = FileManager.default.fileExists(atPath: ledgerPath)
        let summary = try LedgerBackup.restore(
            from: source,
            into: configuration.storage.dataDir,
            replacing: flags["--force"] != nil,
            keepSchema: flags["--keep-schema"] != nil
        )
        let lastActivity = try LedgerBackup.lastActivity(ledgerPath)
        let since =
            lastActivity.map { Date(timeIntervalSince1970: Double($0) / 1000).formatted(.iso8601) } ?? "its start"
        // Who put this ledger in place, from which file: the restored ledger's own audit trail says so (written
        // after the restore, so the entry is not in the backup's past), in plain SQL, as a rollback's earlier
        // schema stays as it is.
        let audited = try LedgerBackup.appendAudit(
            CommandAudit.entry(
                action: "restore",
                subject: absolute(configuration.storage.dataDir),
                before: replaced ? "replaced" : "empty",
                after: "from \(absolute(source)), holding what happened up to \(since)"
            ),
            toLedgerIn: configuration.storage.dataDir
        )
        let revocations = summary.revocations
        let kept =
            "kept from the replaced ledger: \(revocations.credentials) credential revocation(s), "
            + "\(revocations.signingKeys) key retirement(s), \(revocations.newSigningKeys) signing key(s), "
            + "\(revocations.erasedAccounts) erased account(s), \(revocations.auditEntries) audit entr(ies) made after "
            + "the backup"
            + (revocations.anotherInstallation
                ? " (the replaced ledger was another installation's: its keys, erasures and audit trail stay with "
                    + "it, set aside)" : "")
        // Erasures are in the ledger too, and those after the backup cannot be known here; nor, without a
        // replaced ledger read whole, all that was revoked or retired since.
        let redo =
            revocations.complete
            ? kept + "; what was erased after the backup is back: erase again (linkout erase) before starting the "
                + "server\n"
            : (revocations.credentials + revocations.signingKeys + revocations.newSigningKeys
                + revocations.erasedAccounts + revocations.auditEntries > 0
                ? kept + " (the rest could not be read)\n" : "")
                + "what was revoked, retired or erased after the backup is back: revoke again (linkout credentials "
                + "revoke ID), retire again (linkout keys retire KID --force) and erase again (linkout erase) before "
                + "starting the server\n"
        CommandLineInterface.printOutput(
            "restored into \(configuration.storage.dataDir): schema \(summary.schemaVersion)"
                + (flags["--keep-schema"] != nil ? " (kept as the backup had it)" : "")
                + ", \(summary.tokens) tokens"
                + (summary.journaledVisits > 0
                    ? " (\(summary.journaledVisits) visits from the journal beside it, not yet in its tables)" : "")
                + ", "
                + "\(summary.bytes) bytes in \(seconds(since: started)) s\n"
                + "the backup holds what happened up to \(since): before starting the server, have the payment "
                + "provider send its events since then again (README \"Backup and restore\"); reports Apple may "
                + "hold are checked with Apple before they are sent\n" + redo
                + (audited ? "" : "not in the audit log: the backup's schema has none\n")
        )
        return 0
    }

    /// A path as the audit trail keeps it: whole, so it still says which file once the shell it was typed in is
    /// gone.
    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    private static func sqliteConfiguration(_ flags: [String: String], command: String) throws -> Configuration {
        let configuration = try Configuration.load(
            overrides: .init(configPath: flags["--config"], dataDir: flags["--data-dir"]),
            provider: .noPayments
        )
        guard configuration.storage.postgresURL == nil else {
            throw CommandLineInterface.UsageError(
                description: "\(command) is for the SQLite ledger; on PostgreSQL use pg_dump and pg_restore, or "
                    + "point-in-time recovery (README \"Operating it\")"
            )
        }
        return configuration
    }

    private static func seconds(since start: Date) -> String {
        String(format: "%.1f", Date().timeIntervalSince(start))
    }
}
