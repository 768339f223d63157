import Dispatch
import Domain
import Foundation
import Storage
import Synchronization
import TestSupport
import Testing

@Suite("Ledger")
struct LedgerTests {
    final class TemporaryFolder {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-ledger-\(UUID())").path
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// The ledger for `folder`: SQLite in it, or its own schema on the PostgreSQL server under test.
    static func open(_ folder: TemporaryFolder) throws -> Ledger {
        if let url = try TestDatabase.postgresURL(for: folder.path) {
            return try Ledger(postgres: PostgresTarget(url: url, password: nil))
        }
        return try Ledger(directory: folder.path)
    }

    static func token(_ id: String, source: TokenSource = .url) -> TokenFields {
        TokenFields(
            ExternalPurchaseToken(
                appAppleId: 1_234_567_890,
                bundleId: "com.example",
                tokenCreationDate: 1_706_169_600_000,
                externalPurchaseId: ExternalPurchaseID(id)
            ),
            source: source
        )
    }

    static func visit(_ id: String?, checkout: String, at: Int64 = 1_000) -> Visit {
        Visit(
            token: id.map { token($0) },
            checkoutId: CheckoutID(checkout),
            bundleId: "com.example",
            landingPath: "/",
            utm: ["utm_source": "newsletter"],
            at: at
        )
    }

    /// A data folder that cannot be made says where and why in the system's words (it said "NSCocoaErrorDomain
    /// error 512" for a folder under a file).
    @Test func aDataFolderUnderAFileIsRefusedSayingWhy() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-file-\(UUID())").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let refusal = #expect(throws: StorageError.self) { _ = try Ledger(directory: file + "/data/ledger") }
        let text = refusal.map { "\($0)" } ?? ""
        #expect(text.contains("\(file)/data") && text.contains("Not a directory"), "\(text)")
        #expect(!text.contains("NSCocoaErrorDomain"))
        let onFile = #expect(throws: StorageError.self) { _ = try Ledger(directory: file) }
        #expect(onFile.map { "\($0)" }?.contains("is a file, not a folder") == true)
    }

    @Test func repeatVisitsUpdateOneRow() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        let first = try ledger.tokens.recordVisit(Self.visit("a", checkout: "c-a", at: 1_000))
        let second = try ledger.tokens.recordVisit(Self.visit("a", checkout: "c-a", at: 2_000))
        #expect(first == RecordOutcome(checkoutId: "c-a", visitCount: 1, isNewToken: true))
        #expect(second == RecordOutcome(checkoutId: "c-a", visitCount: 2, isNewToken: false))
        let rows = try ledger.tokens.tokens()
        #expect(rows.count == 1)
        #expect(rows[0].visitCount == 2)
        #expect(rows[0].firstSeenAt == 1_000)
        #expect(rows[0].lastSeenAt == 2_000)
        #expect(rows[0].checkoutId == "c-a")
        #expect(try ledger.tokens.count(.visits) == 2)
        #expect(try ledger.tokens.count(.checkouts) == 1)
    }

    @Test func forwardedTokensAreRecordedWithoutAVisit() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        let first = try ledger.tokens.recordForwardedToken(Self.token("f", source: .app), checkoutId: "c-f", at: 5)
        let again = try ledger.tokens.recordForwardedToken(Self.token("f", source: .app), checkoutId: "c-f", at: 6)
        #expect(first.isNewToken)
        #expect(!again.isNewToken)
        let row = try #require(try ledger.tokens.tokens().first)
        #expect(row.source == .app)
        #expect(row.visitCount == 0)
        #expect(try ledger.tokens.checkout(id: "c-f")?.externalPurchaseId == "f")
    }

    /// The app's binding is first come, first served and holds against the app; the backend's replaces it and
    /// holds against everyone but the backend binding the same account again. Visits never touch a binding.
    @Test func accountBindingsHoldAgainstTheAppAndYieldOnlyToTheBackend() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        func forward(_ account: String?, _ source: AccountBindingSource, id: String = "b") throws -> AccountBinding {
            var fields = Self.token(id, source: .app)
            fields.appAccountToken = account
            return try ledger.tokens.recordForwardedToken(fields, checkoutId: "c-\(id)", at: 7, bindingSource: source)
                .binding
        }
        #expect(try forward(nil, .app) == AccountBinding.none)
        #expect(try forward("squatter", .app) == .bound)
        #expect(try forward("squatter", .app) == .unchanged)
        #expect(try forward("owner", .app) == .conflict)
        _ = try ledger.tokens.recordVisit(Self.visit("b", checkout: "c-b"))
        #expect(try ledger.tokens.token("b")?.appAccountToken == "squatter")
        #expect(try forward("owner", .backend) == .replaced(previous: "squatter"))
        #expect(try forward("owner", .backend) == .unchanged)
        #expect(try forward("squatter", .app) == .conflict)
        #expect(try forward("other", .backend) == .conflict)
        #expect(try forward(nil, .backend) == AccountBinding.none)
        #expect(try ledger.tokens.token("b")?.appAccountToken == "owner")

        // The backend first: a new token bound on its word; the same account from the app changes nothing.
        #expect(try forward("owner", .backend, id: "n") == .bound)
        #expect(try forward("owner", .app, id: "n") == .unchanged)
        #expect(try forward("other", .backend, id: "n") == .conflict)
        // The app's binding of an account the backend then confirms becomes the backend's.
        #expect(try forward("owner", .app, id: "m") == .bound)
        #expect(try forward("owner", .backend, id: "m") == .unchanged)
        #expect(try forward("other", .backend, id: "m") == .conflict)
    }

    /// A notification's token replaces the fields an unsigned landing recorded, in the notification's
    /// transaction, and says which; the same values again change nothing.
    @Test func appleCorrectsAKnownTokensFieldsOnce() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        var forged = Self.token("k")
        forged.token.tokenType = "SERVICES"
        forged.token.tokenExpirationDate = forged.token.tokenCreationDate + 60_000
        _ = try ledger.tokens.recordVisit(
            Visit(token: forged, checkoutId: "c-k", bundleId: "com.example", landingPath: "/", utm: [:], at: 1)
        )
        var apple = Self.token("k")
        apple.source = .notification
        apple.token.tokenCreationDate -= 86_400_000
        func notify(_ uuid: String) throws -> AppliedNotification? {
            _ = try ledger.notifications.storeNotification(
                StoredNotification(
                    notificationUUID: uuid,
                    notificationType: "EXTERNAL_PURCHASE_TOKEN",
                    subtype: "CREATED",
                    externalPurchaseId: "k",
                    environment: .production,
                    signedDate: 2,
                    receivedAt: 2,
                    source: .delivery,
                    signedPayload: "x.y.z"
                )
            )
            return try ledger.notifications.apply(
                NotificationChange(notificationUUID: uuid, at: 3, outcome: .known, token: apple, checkoutId: "c-k")
            )
        }
        let applied = try #require(try notify("n1"))
        #expect(applied.outcome == .known)
        #expect(
            applied.corrections == [
                TokenCorrection(
                    field: "tokenCreationDate",
                    recorded: String(forged.token.tokenCreationDate),
                    apple: String(apple.token.tokenCreationDate)
                ),
                TokenCorrection(field: "tokenType", recorded: "SERVICES", apple: nil),
                TokenCorrection(
                    field: "tokenExpirationDate",
                    recorded: String(forged.token.tokenCreationDate + 60_000),
                    apple: nil
                ),
            ]
        )
        let token = try #require(try ledger.tokens.token("k"))
        #expect(token.token.tokenCreationDate == apple.token.tokenCreationDate)
        #expect(token.token.tokenType == nil)
        #expect(token.token.tokenExpirationDate == nil)
        #expect(token.source == .url)
        #expect(token.visitCount == 1)
        #expect(try notify("n1") == nil, "processed once")
        #expect(try notify("n2")?.corrections == [])
    }

    @Test func tokenlessVisitsGetTheirOwnCheckout() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        _ = try ledger.tokens.recordVisit(Self.visit(nil, checkout: "anon"))
        let checkout = try #require(try ledger.tokens.checkout(id: "anon"))
        #expect(checkout.externalPurchaseId == nil)
        #expect(try ledger.tokens.count(.tokens) == 0)
        #expect(try ledger.tokens.checkout(id: "missing") == nil)
    }

    @Test func concurrentWritersShareCommitsAndLoseNothing() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        let failures = Mutex<[String]>([])
        // Real threads: concurrentPerform would run only one per core.
        let group = DispatchGroup()
        for worker in 0..<16 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for index in 0..<50 {
                    // Every worker records the shared token and one of its own, all at once.
                    for id in ["shared", "w\(worker)-\(index)"] {
                        do {
                            _ = try ledger.tokens.recordVisit(Self.visit(id, checkout: "c-\(id)"))
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                    }
                }
            }
        }
        group.wait()
        let failed = failures.withLock { $0 }
        #expect(failed.isEmpty, "\(failed.count) writes failed, first: \(failed.first ?? "")")
        #expect(try ledger.tokens.count(.tokens) == 16 * 50 + 1)
        #expect(try ledger.tokens.count(.visits) == 16 * 50 * 2)
        let shared = try #require(try ledger.tokens.tokens().first { $0.token.externalPurchaseId == "shared" })
        #expect(shared.visitCount == 16 * 50)
        // 1,600 writes from 16 threads: group commit must have put several in each transaction.
        #expect(ledger.commitCount < 1_600)
        print("1600 concurrent writes took \(ledger.commitCount) commits")
    }

    @Test func everythingSurvivesReopening() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        _ = try ledger.tokens.recordVisit(Self.visit("keep", checkout: "c-keep"))
        let secret = try ledger.settings.secret(named: "checkout-key")
        ledger.close()
        let reopened = try Self.open(folder)
        defer { reopened.close() }
        #expect(try reopened.tokens.tokens().map(\.token.externalPurchaseId) == ["keep"])
        #expect(try reopened.settings.secret(named: "checkout-key") == secret)
        #expect(secret.count == 64)
        #expect(try reopened.tokens.recordVisit(Self.visit("keep", checkout: "c-keep")).visitCount == 2)
    }

    /// The data folder a ledger is made in is its owner's alone, whatever the umask allows, and an empty file
    /// already at the ledger's path (`touch`) is made private as the ledger goes into it.
    @Test func aNewLedgersFolderAndAnEmptyFileItIsMadeInAreTheOwnersAlone() throws {
        let parent = TemporaryFolder()
        let folder = parent.path + "/data"
        try Ledger(directory: folder).close()
        var mode = stat()
        #expect(stat(folder, &mode) == 0)
        #expect(mode.st_mode & 0o077 == 0, "the data folder is readable by its owner only")
        let touched = parent.path + "/touched"
        try FileManager.default.createDirectory(atPath: touched, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: touched + "/linkout.sqlite", contents: nil))
        #expect(chmod(touched + "/linkout.sqlite", 0o644) == 0)
        let ledger = try Ledger(directory: touched)
        _ = try ledger.tokens.recordVisit(Self.visit("private", checkout: "c-private"))
        ledger.close()
        #expect(stat(touched + "/linkout.sqlite", &mode) == 0)
        #expect(mode.st_mode & 0o077 == 0, "the ledger made in the empty file is readable by its owner only")
    }

    @Test func writesAfterCloseFailCleanly() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        ledger.close()
        ledger.close()  // a second close returns at once
        #expect(throws: StorageError.self) { try ledger.tokens.recordVisit(Self.visit("late", checkout: "c")) }
        do {
            _ = try ledger.tokens.recordVisit(Self.visit("late", checkout: "c"))
        } catch {
            #expect(error.code == .closed)
        }
    }

    /// Failures say what kind they are, so callers can tell a full disk from a refused report.
    @Test func errorsCarryTheirKind() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        if TestDatabase.postgresURL == nil {
            // SQLite: one server per data folder. (On PostgreSQL, sharing the database is the point.)
            do {
                _ = try Ledger(directory: folder.path)
                Issue.record("a second owner opened the folder")
            } catch {
                #expect(error.code == .inUse)
                // Which process, and what to do (not the lock call's errno words).
                #expect(error.message.contains("(process \(getpid())) is using the data folder"), "\(error)")
                #expect(error.remedy?.contains("stop that process first") == true)
            }
        }
        _ = try ledger.tokens.recordForwardedToken(Self.token("r"), checkoutId: "c-r", at: 1)
        let report = StoredReport(
            requestIdentifier: "req-1",
            externalPurchaseId: "r",
            environment: .production,
            bundleId: "com.example",
            status: .noLineItem,
            body: "{}",
            nextAttemptAt: 0,
            createdAt: 1
        )
        try ledger.reports.enqueueReport(report, lineItemRows: [])
        do {
            var again = report
            again.requestIdentifier = "req-2"
            try ledger.reports.enqueueReport(again, lineItemRows: [])
            Issue.record("a second report was queued")
        } catch {
            #expect(error.code == .conflict)
        }
        do {
            try ledger.reports.enqueueReport(report, lineItemRows: [1])
            Issue.record("a duplicate requestIdentifier was queued")
        } catch {
            #expect(error.code == .conflict || error.code == .constraint)
        }
        try ledger.suspendWrites(true)
        do {
            try ledger.checkWritable(at: 2)
            Issue.record("a suspended ledger took a write")
        } catch {
            #expect(error.code == .readOnly)
            if TestDatabase.postgresURL == nil {
                #expect(error.sqliteCode.map { $0 & 0xff } == 8)  // SQLITE_READONLY
            }
        }
        try ledger.suspendWrites(false)
        try ledger.checkWritable(at: 3)
    }

    /// `linkout export --format json` prints tokens in this shape; its keys are an interface.
    @Test func tokensEncodeWithTheExportKeys() throws {
        let folder = TemporaryFolder()
        let ledger = try Self.open(folder)
        defer { ledger.close() }
        var fields = Self.token("k", source: .app)
        fields.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        fields.token.tokenType = "SERVICES"
        _ = try ledger.tokens.recordForwardedToken(fields, checkoutId: "c-k", at: 9)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(try ledger.tokens.tokens()), as: UTF8.self)
        #expect(
            json
                == #"[{"appAppleId":1234567890,"bundleId":"com.example","checkoutId":"c-k","environment":"production","#
                + #""externalPurchaseId":"k","firstSeenAt":9,"lastSeenAt":9,"source":"app","tokenCreationDate":1706169600000,"#
                + #""tokenType":"SERVICES","visitCount":0}]"#
        )
    }
}
