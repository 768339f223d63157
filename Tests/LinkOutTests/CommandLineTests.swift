import Domain
import Foundation
import TestSupport
import Testing

@testable import LinkOut
@testable import Storage

/// The `linkout` subcommands as a user runs them.
@Suite("Command line")
struct CommandLineTests {
    func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (
        code: Int32, out: String, err: String
    ) {
        let process = try LinkOutProcess(arguments, directory: LiveApplication.repositoryRoot, environment: environment)
        let code = process.waitForExit()
        return (code, process.stdoutText(), process.stderrText())
    }

    @Test func decodePrintsTheJSONAndTheVerdict() throws {
        let valid = try run(["decode", AppleVectors.v1])
        #expect(valid.code == 0)
        #expect(valid.out.contains("\"externalPurchaseId\" : \"00000000-0000-0000-0000-000000000000\""))
        #expect(valid.out.contains("environment: production"))
        #expect(valid.out.contains("verdict: valid"))
        let sandbox = try run(["decode", AppleVectors.v4])
        #expect(sandbox.out.contains("environment: sandbox"))
        #expect(sandbox.out.contains("expired for new purchases"))
        let broken = try run(["decode", "not-a-token!"])
        #expect(broken.code == 1)
        #expect(broken.err.contains("not_base64"))
        let usage = try run(["decode"])
        #expect(usage.code == 2)
    }

    @Test func notificationsRecoverChecksItsArgumentsAndSaysWhatIsMissing() throws {
        #expect(try run(["notifications"]).code == 2)
        let noSince = try run(["notifications", "recover"])
        #expect(noSince.code == 2)
        #expect(noSince.err.contains("--since"))
        let badDate = try run(["notifications", "recover", "--since", "yesterday"])
        #expect(badDate.code == 2)
        #expect(badDate.err.contains("not a date"))
        // Days and times that do not exist were rolled over (February 30th was March 2nd): a typo moved the window.
        for impossible in ["2026-02-30", "2026-12-01T25:00:00Z", "2026-12-01T12:60:00Z", "-2026-01-01", "1969-12-31"] {
            let refused = try run(["notifications", "recover", "--since", impossible])
            #expect(refused.code == 2, "\(impossible)")
            #expect(refused.err.contains("not a date"), "\(impossible)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-cli-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Ledger(directory: directory.path).close()
        // Without Apple credentials nothing can be fetched: exit 1, and the reason.
        let uncredentialed = try run([
            "notifications", "recover", "--since", "2026-01-01", "--data-dir", directory.path,
        ])
        #expect(uncredentialed.code == 1)
        #expect(uncredentialed.out.contains("no Apple credentials"))
        // A window ahead of now is refused; one that ends ahead of now ends now (Apple's dates lie in the past).
        let ahead = try run([
            "notifications", "recover", "--since", "2999-01-01", "--until", "2999-02-01", "--data-dir", directory.path,
        ])
        #expect(ahead.code == 2 && ahead.err.contains("--since must be in the past"), "\(ahead.err)")
        let endingAhead = try run([
            "notifications", "recover", "--since", "2026-01-01", "--until", "2999-02-01", "--data-dir", directory.path,
        ])
        #expect(endingAhead.code == 1 && !endingAhead.out.contains("2999"), "\(endingAhead.out)")
    }

    /// A server killed with a backlog leaves visits in its journal for its next start; a command reading the tables
    /// before then says so on standard error (an export was short by thousands of landings, silently), and once
    /// the server has started and applied them it says nothing.
    @Test func aCommandSaysWhenTheJournalHoldsVisitsNotInTheTables() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-cli-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Ledger(directory: directory.path).close()
        // As a kill leaves them: two journaled visits the tables never took.
        let records = (1...2).flatMap { sequence in
            let token = ExternalPurchaseToken(
                appAppleId: 1_234_567_890,
                bundleId: "com.example",
                tokenCreationDate: 1_706_169_600_000,
                externalPurchaseId: ExternalPurchaseID("k-\(sequence)")
            )
            let visit = Visit(
                token: TokenFields(token, source: .url),
                checkoutId: CheckoutID("c-\(sequence)"),
                bundleId: "com.example",
                landingPath: "/",
                utm: [:],
                at: 1_000
            )
            return JournalCoding.encode(visit, sequence: Int64(sequence))
        }
        try Data(records).write(to: URL(fileURLWithPath: VisitJournal.segmentPath(in: directory.path, first: 1)))
        let short = try run(["export", "--data-dir", directory.path])
        #expect(short.code == 0)
        #expect(short.err.contains("warning: 2 landing(s) in the journal are not in the tables yet"), "\(short.err)")
        #expect(!short.out.contains("k-1"))
        let check = try run(["check", "--data-dir", directory.path])
        #expect(check.out.contains("2 landing(s) in the journal are not in the tables yet"), "\(check.out)")
        try Ledger(directory: directory.path).close()
        let whole = try run(["export", "--data-dir", directory.path])
        #expect(whole.err.isEmpty, "\(whole.err)")
        #expect(whole.out.contains("k-1") && whole.out.contains("k-2"))
    }

    /// Each subcommand takes its own options only: `keys rotate --force` rotated a key, and the others ignored
    /// what they were given.
    @Test func aSubcommandRefusesOptionsOfAnother() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-cli-\(UUID())").path
        let commands: [[String]] = [
            ["keys", "rotate", "--force"], ["keys", "list", "--publish-ahead", "5"],
            ["keys", "retire", "k-1", "--publish-ahead", "5"], ["credentials", "revoke", "cred_x", "--purchase", "x"],
            ["credentials", "reissue", "cred_x", "--purchase", "x"], ["report", "status", "--dry-run"],
        ]
        for command in commands {
            let result = try run(command + ["--data-dir", missing])
            #expect(
                result.code == 2 && result.err.contains("unknown option"),
                "\(command): \(result.code) \(result.err)"
            )
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    /// A command pointed at a folder with no ledger (a mistyped --data-dir) must not make one there and report
    /// success: an erasure or a key rotation would land in a new, empty ledger while the real one is untouched.
    @Test func aCommandRefusesAFolderWithoutALedgerAndCreatesNothing() throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-cli-\(UUID())")
        defer { try? FileManager.default.removeItem(at: parent) }
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        let missing = parent.appendingPathComponent("typo").path
        let commands: [[String]] = [
            ["erase", "--email", "bob@example.com"], ["keys", "rotate"], ["keys", "list"], ["export"], ["audit"],
            ["report", "status"], ["credentials", "revoke", "cred_x"], ["close", "--month", "2026-01"],
        ]
        for command in commands {
            let result = try run(command + ["--data-dir", missing])
            #expect(result.code == 2, "\(command): \(result.code) \(result.err)")
            #expect(result.err.contains("no ledger at \(missing)/linkout.sqlite"), "\(command): \(result.err)")
            #expect(!result.err.contains("StorageError"), "\(command): \(result.err)")
            #expect(!FileManager.default.fileExists(atPath: missing), "\(command) made the folder")
        }
        // An empty file where the ledger would be is no ledger either, and stays empty.
        let empty = parent.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let file = empty.appendingPathComponent("linkout.sqlite").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let erased = try run(["erase", "--email", "bob@example.com", "--data-dir", empty.path])
        #expect(erased.code == 2 && erased.err.contains("no ledger at \(file)"), "\(erased.err)")
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int == 0)
        // Nor is one a first start left with its table of migrations and none in it.
        try SQLiteConnection(path: file).execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)"
        )
        let unmigrated = try run(["audit", "--data-dir", empty.path])
        #expect(unmigrated.code == 2 && unmigrated.err.contains("no ledger at \(file)"), "\(unmigrated.err)")
        #expect(try SQLiteConnection(path: file).query("SELECT name FROM sqlite_master WHERE name = 'tokens'").isEmpty)
    }

    /// A ledger there but out of reach (a folder of another user's, here a link that loops) is named as the
    /// reason it cannot be read, exit 1: "no ledger" sent an operator looking for a typo while the data was there.
    @Test func aLedgerOutOfReachIsNotCalledMissing() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-cli-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("linkout.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: file)
        for command in [["export"], ["erase", "--email", "bob@example.com"], ["backup", "--to", folder.path + "/b"]] {
            let result = try run(command + ["--data-dir", folder.path])
            #expect(result.code == 1, "\(command): \(result.code) \(result.err)")
            #expect(result.err.contains("cannot reach the ledger \(file)"), "\(command): \(result.err)")
            #expect(result.err.contains("Too many levels of symbolic links"), "\(command): \(result.err)")
            #expect(!result.err.contains("no ledger"), "\(command): \(result.err)")
            // Not a permission this user lacks: no advice to run it as another.
            #expect(!result.err.contains("run the command as"), "\(command): \(result.err)")
        }
        let check = try run(["check", "--data-dir", folder.path])
        #expect(check.out.contains("FAIL ledger: cannot reach the ledger \(file)"), "\(check.out)")
    }

    /// The operator's commands that never take a payment run without the provider's and the webhooks' secrets,
    /// or their files (a backup from cron, an export from a shell): they were refused with
    /// "payments.stripe.secretKey: is required". `serve` and `check` still refuse such a configuration.
    @Test func commandsThatTakeNoPaymentNeedNoProviderSecret() throws {
        let live = try LiveApplication()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-cli-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let config = folder.appendingPathComponent("config.json").path
        // The secret files named are not there (not mounted where cron runs), and webhooks have no secret.
        try Data(
            #"""
            { "payments": { "provider": "stripe", "stripe": { "webhookSecretFile": "/nonexistent/whsec" } },
              "webhooks": { "url": "https://backend.example.com/linkout" } }
            """#.utf8
        ).write(to: URL(fileURLWithPath: config))
        let ledger = ["--config", config, "--data-dir", live.dataDir.path]
        let commands: [[String]] = [
            ["export"], ["export", "--table", "audit"], ["report", "status"], ["audit"],
            ["close", "--month", "2026-01"],
            ["backup", "--to", folder.path + "/backup"],
        ]
        for command in commands {
            let result = try run(command + ledger)
            #expect(result.code == 0, "\(command): \(result.code) \(result.err)")
            #expect(!result.err.contains("secretKey"), "\(command): \(result.err)")
        }
        for command in [["check"], ["serve", "--port", "0"]] {
            let result = try run(command + ledger)
            #expect(result.code == 2, "\(command): \(result.code) \(result.err)")
            #expect(result.err.contains("payments.stripe.webhookSecretFile"), "\(command): \(result.err)")
        }
    }

    @Test func simulateMintsAURLTheServerAcceptsAndExportListsIt() throws {
        let minted = try run(["simulate", "--url", "http://127.0.0.1:1", "--sandbox", "--type", "SERVICES"])
        #expect(minted.code == 0)
        let url = minted.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(url.hasPrefix("http://127.0.0.1:1?externalPurchaseToken="))
        #expect(url.hasSuffix("&bundleId=com.example"))
        let live = try LiveApplication()
        let target = "/" + url.dropFirst("http://127.0.0.1:1".count)
        #expect(try live.get(target).status == 303)
        let id = try #require(try live.ledger().tokens.tokens().first?.token.externalPurchaseId)
        #expect(id.rawValue.hasPrefix("SANDBOX_"))
        let csv = try run(["export", "--format", "csv", "--data-dir", live.dataDir.path])
        #expect(csv.code == 0)
        #expect(csv.out.contains(id.rawValue + ",sandbox,url,com.example,1234567890,SERVICES"))
        let json = try run(["export", "--format", "json", "--data-dir", live.dataDir.path])
        #expect(json.out.contains("\"externalPurchaseId\" : \"\(id)\""))
        #expect(try run(["export", "--format", "xml"]).code == 2)
        #expect(try run(["export", "--table", "visits"]).code == 2)
        let purchases = try run(["export", "--table", "purchases", "--data-dir", live.dataDir.path])
        #expect(purchases.code == 0)
        #expect(purchases.out.hasPrefix("purchaseId,provider,externalPurchaseId"))
        #expect(try run(["simulate", "--type", "OTHER"]).code == 2)
        // What it prints is opened: a base that is no http(s) URL is refused, not turned into a link to nowhere.
        // Nor one with a query or a fragment: StoreKit appends its own query, and the landing saw no token.
        for url in [
            "notaurl", "ftp://example.com", "http://", "http://127.0.0.1:1/?utm_source=x", "http://127.0.0.1:1/#f",
        ] {
            #expect(try run(["simulate", "--url", url]).code == 2, "\(url)")
        }
        for id in ["99999999999999999999999", "-1", "abc"] {
            #expect(try run(["simulate", "--app-apple-id", id]).code == 2, "\(id)")
        }
        // Without --url, the configured landing: the public URL with the first landing path (the bare public URL
        // led to `/`, a 404 when the landing is elsewhere).
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-simulate-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: config) }
        try Data(#"{"server": {"publicURL": "https://pay.example.com/"}, "landing": {"paths": ["/buy", "/go"]}}"#.utf8)
            .write(to: config)
        let configured = try run(["simulate", "--config", config.path])
        #expect(configured.out.hasPrefix("https://pay.example.com/buy?externalPurchaseToken="), "\(configured.out)")
    }

    @Test func reportDryRunAndStatusShowTheOutboxWithoutSending() throws {
        // The server waits ten years (Apple's example token is two years old), so only the CLI (configured with
        // 0 below) finds the report due, however many passes the server makes meanwhile.
        let live = try LiveApplication { $0.reporting.noLineItemAfterSeconds = 10 * 365 * 86_400 }
        #expect(try live.get(AppleVectors.documentedTarget).status == 303)
        // The visit in the tables, not only in the journal, before another process reads the database.
        _ = live.ledger()
        let config = live.dataDir.appendingPathComponent("report-config.json")
        try Data(#"{"reporting": {"noLineItemAfterSeconds": 0}}"#.utf8).write(to: config)
        let dryRun = try run(["report", "--dry-run", "--config", config.path, "--data-dir", live.dataDir.path])
        #expect(dryRun.code == 0)
        #expect(dryRun.out.contains("\"status\":\"NO_LINE_ITEM\""))
        #expect(dryRun.out.contains("1 report(s) would be queued"))
        #expect(dryRun.out.contains("waiting for Apple credentials: apple.issuerId is empty"))
        #expect(try live.ledger().reports.reports(for: "00000000-0000-0000-0000-000000000000").isEmpty)
        let status = try run(["report", "status", "--data-dir", live.dataDir.path])
        #expect(status.code == 0)
        #expect(status.out.contains("pending: 0"))
        #expect(status.out.contains("oldest unreported token: first seen"))
        #expect(status.out.contains("reporting: waiting for Apple credentials"), "\(status.out)")
        // Apple's example token was created in January 2024: long past the notice, however recently it landed.
        #expect(status.out.contains("notice for an unreported token came "), "\(status.out)")
        #expect(try run(["report"]).code == 2)
        live.application.shutdown()
        let stopped = try run(["report", "status", "--data-dir", live.dataDir.path])
        #expect(stopped.out.contains("reporting: stopped: no server runs on"), "\(stopped.out)")
    }

    @Test func unknownCommandsAndOptionsAreUsageErrors() throws {
        #expect(try run(["frobnicate"]).code == 2)
        #expect(try run(["serve", "--colour", "red"]).code == 2)
        // An option given twice was kept once: `erase --email a --email b` erased b alone and said done.
        let twice = try run(["erase", "--email", "a@example.com", "--email", "b@example.com"])
        #expect(twice.code == 2)
        #expect(twice.err.contains("option '--email' is given twice"))
        // A switch given a value was on whatever the value: `--force=false` forced.
        let valued = try run(["simulate", "--sandbox=false"])
        #expect(valued.code == 2)
        #expect(valued.err.contains("option '--sandbox' takes no value"))
        #expect(valued.out.isEmpty)
        // The next option is no value: `--data-dir --force` made a folder named `--force`.
        let swallowed = try run(["restore", "--from", "backup.sqlite", "--data-dir", "--force"])
        #expect(swallowed.code == 2)
        #expect(swallowed.err.contains("option '--data-dir' needs a value"))
        let missing = try run(["report", "restate", "SANDBOX_x", "item"])
        #expect(missing.code == 2)
        #expect(missing.err.contains("use 'linkout report restate EXTERNAL_PURCHASE_ID LINE_ITEM_ID FILE"))
        // FILE is named with the system's reason, before any ledger is looked for.
        let unreadable = try run(["report", "restate", "SANDBOX_x", "item", "/nonexistent/body.json"])
        #expect(unreadable.code == 2)
        #expect(unreadable.err.contains("FILE: cannot read /nonexistent/body.json: there is no such file"))
        let folder = try run(["report", "restate", "SANDBOX_x", "item", "/tmp"])
        #expect(folder.code == 2)
        #expect(folder.err.contains("FILE: cannot read /tmp: not a readable file"))
        let help = try run(["help"])
        #expect(help.code == 0)
        #expect(help.out.contains("linkout <command>"))
    }

    /// A token Apple rejected is listed with the command that resolves it, and the command does.
    @Test func reportAttentionListsRejectedTokensAndTheActionsResolveThem() throws {
        let harness = try ReportingHarness()
        try harness.record("cli-stuck")
        harness.production.enqueue(FakeAppleServer.rejection([FakeAppleServer.AppleError.statusRegression]))
        harness.service.tick()
        let dataDir = harness.configuration.storage.dataDir
        // The PostgreSQL tier: the command reads the harness's database, not the folder.
        let database = harness.configuration.storage.postgresURL.map { ["LINKOUT_DATABASE_URL": $0] } ?? [:]
        let run = { (arguments: [String]) in try self.run(arguments, environment: database) }
        let listed = try run(["report", "attention", "--data-dir", dataDir])
        #expect(listed.code == 0)
        #expect(listed.out.contains("cli-stuck"))
        #expect(listed.out.contains("LineItemStatusRegressionError"))
        #expect(listed.out.contains("resolve: linkout report no-line-item cli-stuck"))
        #expect(listed.out.contains("1 token(s) need attention"))
        #expect(try run(["report", "restate", "cli-stuck", "--data-dir", dataDir]).code == 2)
        #expect(try run(["report", "resend", "nope", "--data-dir", dataDir]).code == 1)
        let resolved = try run(["report", "no-line-item", "cli-stuck", "--data-dir", dataDir])
        #expect(resolved.code == 0)
        #expect(resolved.out.contains("goes again as NO_LINE_ITEM"))
        try harness.tickUntilSettled()
        #expect(try harness.reports("cli-stuck").map(\.state) == [.accepted])
        #expect(try run(["report", "attention", "--data-dir", dataDir]).out.contains("0 token(s) need attention"))
    }
}
