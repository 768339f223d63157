import Crypto
import Domain
import Foundation
import Lifecycle
import LinkOut
import Logging
import Payments
import TestSupport
import Testing

@testable import LinkOut
@testable import Storage

/// The audit log: who changed what Apple, the provider or the developer's backend receives, from where, before
/// and after; kept as written, shown at `/admin/audit`, by `linkout audit` and in the export.
@Suite("Audit trail")
struct AuditTrailTests {
    static let admin = ["Authorization": "Bearer admin-secret"]

    static func post(_ live: LiveApplication, _ path: String, headers: [String: String] = admin) throws
        -> RawClient.Response
    {
        try live.post(path, contentType: "text/plain", body: "", headers: headers)
    }

    /// A path or a reason with a line break forged a whole entry in `linkout audit`'s text, and an escape
    /// sequence reached the terminal: the text outputs write them as escapes, one entry a line.
    @Test func textFromOutsidePrintsAsOneLineOfVisibleCharacters() {
        let forged = "/tmp/evil\n99  2026-12-06T22:00:00Z  admin:0123 from 10.0.0.1  credential.revoke\u{1b}[31mRED"
        let shown = TerminalText.visible(forged)
        #expect(!shown.contains("\n") && !shown.contains("\u{1b}"))
        #expect(shown.hasPrefix(#"/tmp/evil\n99  "#) && shown.hasSuffix(#"credential.revoke\u{1b}[31mRED"#))
        #expect(TerminalText.visible("tab\there\u{202E}txt.exe\u{85}") == #"tab\there\u{202e}txt.exe\u{85}"#)
        #expect(TerminalText.visible("Grüße, 東京 – ok") == "Grüße, 東京 – ok")
        // Once anything is escaped, a backslash is too: "\n" typed is not read as a line break escaped.
        #expect(TerminalText.visible("C:\\n\n") == #"C:\\n\n"#)
        #expect(TerminalText.visible("\u{200F}x") == #"\u{200f}x"#)
    }

    /// The commands linkout suggests quote an id a shell would read (a line item id from the backend API may hold
    /// `;` or `$(…)`, pasted bare the operator's shell ran it); a plain id stays as it is.
    @Test func aSuggestedCommandQuotesAnIdAShellWouldRead() throws {
        #expect(LineItemID("txn_01:refund:adj_9").shellWord == "txn_01:refund:adj_9")
        #expect(LineItemID("x;$(id>pwned);<b>").shellWord == "'x;$(id>pwned);<b>'")
        #expect(LineItemID("it's").shellWord == #"'it'\''s'"#)
        #expect(LineItemID("").shellWord == "''")
        #expect(LineItemID("=ls").shellWord == "'=ls'")
        let note = LineItemScreen.note([], externalPurchaseId: "SANDBOX_1", lineItemId: "a b;rm -rf ~")
        #expect(note.contains("linkout report retract SANDBOX_1 'a b;rm -rf ~'"), "\(note)")
        // What a shell makes of the quoted word is the id again.
        let output = Pipe()
        let shell = try ChildProcess(
            "/bin/sh",
            ["-c", "printf %s " + LineItemID("it's $(x); `y`").shellWord],
            output: output.fileHandleForWriting.fileDescriptor
        )
        try output.fileHandleForWriting.close()
        let echoed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(shell.waitForExit() == 0)
        #expect(echoed == "it's $(x); `y`")
    }

    @Test func adminWritesAndSignInsAreRecordedWithoutSecrets() throws {
        let live = try LiveApplication { $0.adminToken = "admin-secret" }
        let (code, purchaseId) = try AppEntitlementTests.purchase(live)
        let redeemed = try AppEntitlementTests.json(try AppEntitlementTests.redeem(live, #"{"code": "\#(code)"}"#))
        let credentialId = try #require(redeemed["credentialId"] as? String)
        let reissued = try Self.post(live, "/admin/credentials/\(credentialId)/reissue")
        let secret = try #require(try AppEntitlementTests.json(reissued)["secret"] as? String)
        #expect(try Self.post(live, "/admin/signing-keys/rotate").status == 201)
        #expect(try Self.post(live, "/admin/demo/purchases/\(purchaseId)/refund").status == 200)
        #expect(try Self.post(live, "/admin/demo/purchases/\(purchaseId)/refund").status == 409)  // not recorded
        #expect(try Self.post(live, "/admin/signing-keys/rotate", headers: [:]).status == 401)  // not recorded
        // The dashboard: a refused token, then the right one.
        let form = try live.get("/admin")
        let cookie = try #require(form.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
        let csrf = try #require(form.text.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)
        // A guesser's further tries within the hour are counted by the throttle, not written to the log.
        for token in ["guessed-token", "guessed-again", "guessed-a-third-time", "admin-secret"] {
            _ = try live.post(
                "/admin/login",
                contentType: "application/x-www-form-urlencoded",
                body: "csrf=\(csrf)&token=\(token)",
                headers: ["Cookie": cookie]
            )
        }

        let page = try AppEntitlementTests.json(try live.get("/admin/audit?limit=100", headers: Self.admin))
        let entries = try #require(page["entries"] as? [[String: Any]])
        let actions = entries.compactMap { $0["action"] as? String }
        #expect(
            Array(actions.prefix(5)) == [
                "dashboard.sign_in", "dashboard.sign_in_failed", "demo.refund", "signing_key.rotate",
                "credential.reissue",
            ]
        )
        let fingerprint = try AuditFingerprint(ledger: live.ledger())
        let admin = "admin:" + fingerprint("admin-secret")
        #expect(entries[0]["actor"] as? String == admin)
        #expect(entries[1]["actor"] as? String == "refused:" + fingerprint("guessed-token"))
        #expect(actions.filter { $0 == "dashboard.sign_in_failed" }.count == 1)
        #expect(entries[2]["subject"] as? String == purchaseId && entries[2]["after"] as? String == "refunded")
        #expect(entries[2]["before"] as? String == "paid", "\(entries[2])")
        #expect((entries[3]["after"] as? String)?.hasPrefix("new key ") == true)
        #expect((entries[3]["before"] as? String)?.hasPrefix("signing with ") == true, "\(entries[3])")
        #expect(entries[4]["subject"] as? String == credentialId)
        #expect(entries[4]["before"] as? String == "active", "\(entries[4])")
        #expect((entries[4]["after"] as? String)?.hasPrefix("replaced by cred_") == true)
        #expect(entries.allSatisfy { $0["origin"] as? String == "127.0.0.1" || $0["origin"] as? String == "start" })
        // Never a secret: not the admin token, not the guessed one, not the reissued credential.
        let text = try live.get("/admin/audit", headers: Self.admin).text
        for secret in ["admin-secret", "guessed-token", secret] { #expect(!text.contains(secret)) }
        // Paged by id: the next page starts below the last entry shown.
        let first = try AppEntitlementTests.json(try live.get("/admin/audit?limit=2", headers: Self.admin))
        let next = try #require(first["nextBefore"] as? Int64)
        let second = try AppEntitlementTests.json(
            try live.get("/admin/audit?limit=2&before=\(next)", headers: Self.admin)
        )
        #expect((second["entries"] as? [[String: Any]])?.first?["action"] as? String == "demo.refund")
        #expect(try live.get("/admin/audit?before=x", headers: Self.admin).status == 400)
        // Any id up to Int64's largest (a 19-digit one lists from the newest), nothing past it.
        #expect(try live.get("/admin/audit?before=\(Int64.max)", headers: Self.admin).status == 200)
        let past = try live.get("/admin/audit?before=9223372036854775808", headers: Self.admin)
        #expect(past.status == 400 && past.text.contains("from 1 to \(Int64.max)"), "\(past.text)")
        // A revoke says what it found: the second of two finds the credential revoked already.
        let replacement = try #require(
            (try AppEntitlementTests.json(reissued)["credential"] as? [String: Any])?["id"] as? String
        )
        for _ in 0..<2 { #expect(try Self.post(live, "/admin/credentials/\(replacement)/revoke").status == 200) }
        let revokes = try #require(
            try AppEntitlementTests.json(try live.get("/admin/audit?limit=2", headers: Self.admin))["entries"]
                as? [[String: Any]]
        )
        #expect(
            revokes.allSatisfy { $0["action"] as? String == "credential.revoke" && $0["after"] as? String == "revoked" }
        )
        #expect(revokes.last?["before"] as? String == "active", "\(revokes)")
        #expect((revokes.first?["before"] as? String)?.hasPrefix("revoked 20") == true, "\(revokes)")
    }

    @Test func changesOfRegimesRatesAndAppleKeyAreNoticedAtStart() throws {
        let setup = try LiveReportingTests.Setup()
        let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-audit-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dataDir) }
        // Regimes with 27 countries and rates of several currencies: sets and dictionaries print in another order
        // in every process, and an unchanged configuration must not look changed.
        let before = { (configuration: inout Configuration) in
            setup.configure(&configuration, grace: 86_400)
            configuration.commission.regimes = CommissionRegime.builtIn.filter { $0.id == "eu-2025-06" }
            configuration.payments.exchangeRates = ExchangeRateTable(
                entries: [
                    "USD": .init(reportingCurrency: "EUR", undated: "0.92"),
                    "GBP": .init(reportingCurrency: "EUR", undated: "1.17"),
                    "JPY": .init(reportingCurrency: "EUR", undated: "0.0061"),
                ]
            )
        }
        do { _ = try LiveApplication(dataDir: dataDir, configure: before) }
        do { _ = try LiveApplication(dataDir: dataDir, configure: before) }  // nothing changed
        let live = try LiveApplication(dataDir: dataDir) { configuration in
            setup.configure(&configuration, grace: 86_400)
            configuration.commission.regimes = CommissionRegime.builtIn.filter { $0.id == "jp" }
            configuration.apple.keyId = "NEWKEY0001"
            configuration.webhooks.url = "https://hookuser:HOOKPASS@hooks.example.com/in?apikey=QUERYSECRET"
            configuration.webhooks.secret = "webhook-secret-0123456789"
            configuration.adminToken = "rotated-admin-token-0123"
        }
        let entries = try live.ledger().audit.entries()
        let noticed = entries.filter { $0.actor == "linkout" }
        #expect(
            noticed.map(\.action).sorted() == [
                "config.access_tokens", "config.access_tokens", "config.apple_endpoints", "config.apple_key",
                "config.apple_key", "config.apps", "config.catalog", "config.commission_regimes",
                "config.commission_regimes", "config.durability", "config.entitlement_signing",
                "config.exchange_rates", "config.exchange_rates", "config.payment_provider", "config.public_url",
                "config.reporting", "config.retention", "config.tax", "config.trusted_proxies", "config.webhooks",
                "config.webhooks",
            ]
        )
        // A replaced admin token is on record by the fingerprint its actions carry (`admin:…`), never the token.
        let tokens = try #require(noticed.first { $0.action == "config.access_tokens" && $0.before != nil })
        let rotated = try AuditFingerprint(ledger: live.ledger())("rotated-admin-token-0123")
        #expect(tokens.after?.hasPrefix("admin \(rotated), API ") == true, "\(tokens)")
        #expect(tokens.before?.hasPrefix("admin ") == true && tokens.before?.contains(rotated) == false)
        #expect(!(tokens.after ?? "").contains("rotated-admin"))
        // Where the backend's events go is recorded without the credentials in the URL or the secret.
        let hooks = try #require(noticed.first { $0.action == "config.webhooks" && $0.before == "none" })
        let after = hooks.after ?? ""
        #expect(after.hasPrefix("https://hooks.example.com/… (URL "), "\(after)")
        for secret in ["HOOKPASS", "QUERYSECRET", "webhook-secret", "/in"] { #expect(!after.contains(secret)) }
        // The secret's fingerprint is keyed by the installation's secret: an unkeyed hash of a guess does not
        // match it.
        let guess = Hex.encode(try SHA256.digest(Array("webhook-secret-0123456789".utf8)).prefix(6))
        #expect(!after.contains(guess))
        #expect(noticed.contains { $0.action == "config.exchange_rates" && $0.after == "none" })
        let regimes = try #require(noticed.first { $0.action == "config.commission_regimes" })
        #expect(
            regimes.before?.hasPrefix("eu-2025-06 (terms ") == true && regimes.after?.hasPrefix("jp (terms ") == true
        )
        let key = try #require(noticed.first { $0.action == "config.apple_key" })
        #expect(key.after?.contains("NEWKEY0001") == true && key.before?.contains("2X9R4HXF34") == true)
        #expect(!(key.after ?? "").contains("PRIVATE"))
    }

    /// A server refused at start never ran on its configuration, so it records no change of it (a start refused
    /// for a retired signing key recorded its settings, and the next good start changed them back: the log said
    /// the retired key had signed while no server ran).
    @Test func aRefusedStartRecordsNoChange() throws {
        let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-audit-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dataDir) }
        let first = { (configuration: inout Configuration) in configuration.adminToken = "first-admin-token-0123" }
        do { _ = try LiveApplication(dataDir: dataDir, configure: first) }
        let holder = try LiveApplication()  // holds the port the refused start asks for
        #expect(throws: (any Error).self) {
            _ = try LiveApplication(dataDir: dataDir) { configuration in
                configuration.adminToken = "second-admin-token-0123"
                configuration.server.port = holder.port
            }
        }
        let live = try LiveApplication(dataDir: dataDir, configure: first)
        let changes = try live.ledger().audit.entries().filter { $0.action == "config.access_tokens" }
        #expect(changes.count == 1, "\(changes)")
    }

    /// A switch of the provider's secret key (another account, live for test) or of its API host is a change of
    /// what the provider receives: noticed at start, by keyed fingerprints, never the key. A ledger that recorded
    /// the provider by its id alone (an earlier release) takes the new wording without an entry.
    /// The trail the server keeps, on `ledger`, for `ConfigurationAudit.notice` called directly.
    static func trail(_ ledger: Ledger) -> AuditTrail {
        AuditTrail(
            ledger: ledger,
            clock: .system,
            logger: Logger(label: "test", level: .critical),
            trustedProxies: [],
            adminToken: nil,
            fingerprint: AuditFingerprint(secret: "installation")
        )
    }

    @Test func aChangeOfThePaymentProvidersKeyOrHostIsNoticedWithoutTheKey() throws {
        let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-audit-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dataDir) }
        let ledger = try Ledger(directory: dataDir.path)
        defer { ledger.close() }
        let trail = Self.trail(ledger)
        var configuration = Configuration()
        configuration.payments.provider = .stripe
        configuration.payments[.stripe, "secretKey"] = "sk_test_OLDSECRET"
        configuration.payments[.stripe, "webhookSecret"] = "whsec_0123456789"
        try ledger.settings.setSetting(named: "audit.payment_provider", to: "stripe")
        ConfigurationAudit.notice(configuration, ledger: ledger, trail: trail)
        #expect(try ledger.audit.entries().filter { $0.action == "config.payment_provider" }.isEmpty)
        configuration.payments[.stripe, "secretKey"] = "sk_live_NEWSECRET"
        ConfigurationAudit.notice(configuration, ledger: ledger, trail: trail)
        configuration.payments[.stripe, "apiBase"] = "https://stripe.example.com"
        ConfigurationAudit.notice(configuration, ledger: ledger, trail: trail)
        let changes = try ledger.audit.entries().filter { $0.action == "config.payment_provider" }
        #expect(changes.count == 2)
        for change in changes {
            for secret in ["OLDSECRET", "NEWSECRET", "whsec_", "stripe.example.com"] {
                #expect(!(change.before ?? "").contains(secret) && !(change.after ?? "").contains(secret))
            }
        }
        let secrets = { (text: String?) in text?.firstMatch(of: /secrets ([0-9a-f]+)/)?.1 }
        let settings = { (text: String?) in text?.firstMatch(of: /settings ([0-9a-f]+)/)?.1 }
        let ordered = changes.sorted { $0.id < $1.id }
        // The key's change: secrets differ, settings do not; the host's: the other way round.
        #expect(secrets(ordered[0].before) != secrets(ordered[0].after))
        #expect(settings(ordered[0].before) == settings(ordered[0].after))
        #expect(settings(ordered[1].before) != settings(ordered[1].after))
        #expect(secrets(ordered[1].before) == secrets(ordered[1].after))
    }

    /// What else changes what Apple or a person receives is on record too: where reports go, the public URL, the
    /// `NO_LINE_ITEM` wait, the tax settings, the apps, a product's price, the retention. An unchanged
    /// configuration adds nothing; a URL is recorded without what it may carry beyond its host.
    @Test func changesOfWhatAppleOrAPersonReceivesAreNoticed() throws {
        let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-audit-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dataDir) }
        let ledger = try Ledger(directory: dataDir.path)
        defer { ledger.close() }
        let trail = Self.trail(ledger)
        var configuration = Configuration()
        configuration.payments.taxRates = TaxRates(basisPoints: ["DEU": 1900, "FRA": 2000, "ITA": 2200])
        ConfigurationAudit.notice(configuration, ledger: ledger, trail: trail)
        let first = try ledger.audit.entries().count
        ConfigurationAudit.notice(configuration, ledger: ledger, trail: trail)
        #expect(try ledger.audit.entries().count == first)
        configuration.apple.productionURL = "https://elsewhere.example.com"
        configuration.server.publicURL = "https://pay.example.com"
        configuration.reporting.noLineItemAfterSeconds = 0
        configuration.payments.defaultTaxCountry = "FRA"
        configuration.apps = []
        configuration.catalog[0].prices["EUR"] = Money(currency: "EUR", decimal: "1.00")
        configuration.retention.personalDataDays = 30
        configuration.server.trustedProxies = ["10.1.2.3"]
        configuration.storage.durability = "normal"
        ConfigurationAudit.notice(configuration, ledger: ledger, trail: trail)
        let changes = try ledger.audit.entries().filter { $0.before != nil }
        #expect(
            changes.map(\.action).sorted() == [
                "config.apple_endpoints", "config.apps", "config.catalog", "config.durability", "config.public_url",
                "config.reporting", "config.retention", "config.tax", "config.trusted_proxies",
            ]
        )
        let after = Dictionary(uniqueKeysWithValues: changes.map { ($0.action, $0.after ?? "") })
        #expect(after["config.apple_endpoints"]?.hasPrefix("production https://elsewhere.example.com") == true)
        configuration.apple.sandboxURL = "https://relay.example.com/apple?key=RELAYSECRET"
        ConfigurationAudit.notice(configuration, ledger: ledger, trail: trail)
        let relay = try #require(try ledger.audit.entries().first { $0.after?.contains("relay.example.com") == true })
        #expect(!(relay.after ?? "").contains("RELAYSECRET"), "\(relay)")
        // A proxy of one's own on the way to Apple (with a CA file to read what passes) is a change too.
        configuration.apple.proxy = "http://127.0.0.1:21499"
        ConfigurationAudit.notice(configuration, ledger: ledger, trail: trail)
        #expect(try ledger.audit.entries().contains { $0.after?.contains(", proxy http://127.0.0.1:21499") == true })
        #expect(after["config.trusted_proxies"] == "10.1.2.3")
        #expect(after["config.durability"] == "storage.durability normal")
        #expect(after["config.reporting"] == "NO_LINE_ITEM after 0 s")
        #expect(after["config.tax"]?.hasPrefix("default country FRA, rates ") == true)
        #expect(after["config.retention"] == "personal data kept 30 days")
        #expect(after["config.apps"] == "")
    }

    /// A value an earlier release recorded in other words (no exchange rates as the digest of nothing) is not
    /// a change: the upgrade adds no entry for it.
    @Test func anEarlierWordingOfTheSameSettingIsNoChange() throws {
        let dataDir = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-audit-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dataDir) }
        do {
            // What an earlier release recorded (through the live ledger: the PostgreSQL tier runs this too).
            let earlier = try LiveApplication(dataDir: dataDir) { _ in }
            try earlier.ledger().settings.setSetting(named: "audit.exchange_rates", to: "configured e3b0c44298fc")
        }
        let live = try LiveApplication(dataDir: dataDir) { _ in }
        let rates = try live.ledger().audit.entries().filter { $0.action == "config.exchange_rates" }
        #expect(rates.count == 1 && rates.first?.before == nil, "only the first start's entry: \(rates)")
        #expect(try live.ledger().settings.setting(named: "audit.exchange_rates") == "none")
    }

    @Test func theLogCannotBeChangedOrEmptiedEvenInTheDatabase() throws {
        let live = try LiveApplication { $0.adminToken = "admin-secret" }
        #expect(try Self.post(live, "/admin/signing-keys/rotate").status == 201)
        let ledger = live.ledger()
        #expect(throws: StorageError.self) {
            try ledger.database.writer.write { connection throws(StorageError) in
                try connection.query("UPDATE audit_log SET actor = 'someone else'")
            }
        }
        #expect(throws: StorageError.self) {
            try ledger.database.writer.write { connection throws(StorageError) in
                try connection.query("DELETE FROM audit_log")
            }
        }
        // PostgreSQL's row triggers do not fire on TRUNCATE: a statement trigger refuses it (SQLite has none).
        if ledger.database.dialect == .postgres {
            #expect(throws: StorageError.self) {
                try ledger.database.writer.write { connection throws(StorageError) in
                    try connection.execute("TRUNCATE audit_log")
                }
            }
            // A ledger of an earlier release, without the trigger, gets it at its next start.
            try ledger.database.writer.write { connection throws(StorageError) in
                try connection.execute("DROP TRIGGER audit_log_no_truncate ON audit_log")
            }
            let restarted = try live.application.configuration.storage.openLedger()
            defer { restarted.close() }
            #expect(throws: StorageError.self) {
                try restarted.database.writer.write { connection throws(StorageError) in
                    try connection.execute("TRUNCATE audit_log")
                }
            }
        }
        #expect(try ledger.audit.entries().contains { $0.action == "signing_key.rotate" })
    }
}

extension AuditTrailTests {
    @Test func theCommandLinesActionsAreRecordedAndListed() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-audit-cli-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Ledger(directory: directory.path).close()
        // Who ran it is the account the process runs as, whatever $USER says (here a line break and a fake entry).
        let rotate = try LinkOutProcess(
            ["keys", "rotate", "--data-dir", directory.path],
            environment: ["USER": "mallory\n2026-01-01 admin:forged"]
        )
        #expect(rotate.waitForExit() == 0, "\(rotate.stderrText())")
        let erase = try LinkOutProcess(["erase", "--email", "nobody@example.com", "--data-dir", directory.path])
        #expect(erase.waitForExit() == 0, "\(erase.stderrText())")
        #expect(erase.stdoutText().hasPrefix("erased: 0 stored bodies"))
        // An address leads to the person's payments, not to the account the app knows them by: said so.
        #expect(erase.stdoutText().contains("stays until erased too (--account-token)"), "\(erase.stdoutText())")
        // Nor what no address holds (a space, a line break, an escape, a bidi override), nor one past 254 bytes:
        // refused, with no audit entry for an erasure that could find nothing.
        let long = String(repeating: "a", count: 100_000) + "@example.com"
        for typo in [
            "x", "bob@ex ample.com", "bob@example.com\nfoo", "bob\u{1B}[31m@example.com", "a@b.c\u{202E}", long,
        ] {
            #expect(try LinkOutProcess(["erase", "--email", typo, "--data-dir", directory.path]).waitForExit() == 2)
        }
        // A pasted address with spaces around it is the same person.
        let pasted = try LinkOutProcess(["erase", "--email", " Nobody@Example.com \n", "--data-dir", directory.path])
        #expect(pasted.waitForExit() == 0, "\(pasted.stderrText())")
        let subjects = try LedgerTestAccess.auditSubjects(directory.path, action: "privacy.erase")
        #expect(subjects.count == 2 && Set(subjects).count == 1, "\(subjects)")
        let listed = try LinkOutProcess(["audit", "--data-dir", directory.path])
        #expect(listed.waitForExit() == 0)
        let line = try #require(listed.stdoutText().split(separator: "\n").first { $0.contains("signing_key.rotate") })
        #expect(line.contains(" cli:") && line.contains("from local") && line.contains("after: new key "))
        #expect(!listed.stdoutText().contains("mallory") && !listed.stdoutText().contains("forged"))
        #expect(AuditTrail.printable("a\nb") == "a\\x0Ab")
        #expect(listed.stdoutText().contains("privacy.erase  email:"))
        #expect(!listed.stdoutText().contains("nobody@example.com"))
        let exported = try LinkOutProcess(["export", "--table", "audit", "--data-dir", directory.path])
        #expect(exported.waitForExit() == 0)
        #expect(exported.stdoutText().hasPrefix("id,at,actor,origin,action,subject,before,after\r\n"))
        #expect(exported.stdoutText().contains(",signing_key.rotate,"))
    }
}
