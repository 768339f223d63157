import Crypto
import Domain
import ExternalPurchase
import Foundation
import HTTPServer
import Lifecycle
import Logging
import Storage
import Synchronization
import TestSupport
import Testing

@testable import LinkOut

/// Get Notification History at volume: more than 20,000 notifications over a thousand pages, a failure half-way,
/// and a second run of the same window that goes on from the stored page. Every notification ends acted on
/// exactly once, through the real libcurl client against a fake App Store Server API on 127.0.0.1.
@Suite("Notification recovery at volume")
struct NotificationRecoveryVolumeTests {
    /// Serves `payloads` in pages of `pageSize` behind `paginationToken=page-N`; the first request for
    /// `failingPage` gets a 500.
    final class PagedHistoryServer: Sendable {
        let port: Int
        private let server: HTTPServer
        private final class Asked: Sendable {
            let tokens = Mutex<[String]>([])
        }
        private let asked = Asked()

        init(payloads: [String], pageSize: Int, failingPage: Int? = nil) throws {
            var configuration = HTTPServer.Configuration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            configuration.eventLoopCount = 1
            configuration.workerThreads = 2
            var router = Router()
            let asked = self.asked
            let pageCount = max(1, (payloads.count + pageSize - 1) / pageSize)
            router.post("/inApps/v1/notifications/history") { request in
                let token = request.queryValue("paginationToken") ?? ""
                let firstTime = asked.tokens.withLock { log in
                    defer { log.append(token) }
                    return !log.contains(token)
                }
                let page = token.isEmpty ? 1 : token.hasPrefix("page-") ? Int(token.dropFirst("page-".count)) : nil
                guard let page else {
                    // A pagination token this server never gave (or no longer honours).
                    return HTTPResponse(status: .badRequest, body: Array(#"{"errorCode":4000006}"#.utf8))
                }
                if page == failingPage && firstTime {
                    return HTTPResponse(status: HTTPStatus(code: 500, reasonPhrase: "Internal Server Error"))
                }
                let items = payloads.dropFirst((page - 1) * pageSize).prefix(pageSize)
                    .map { #"{"signedPayload":"\#($0)","sendAttempts":[]}"# }.joined(separator: ",")
                let hasMore = page < pageCount
                let next = hasMore ? #","paginationToken":"page-\#(page + 1)""# : ""
                let body = #"{"notificationHistory":[\#(items)],"hasMore":\#(hasMore)\#(next)}"#
                return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
            }
            server = HTTPServer(
                configuration: configuration,
                router: router,
                logger: Logger(label: "fake", level: .critical)
            )
            port = try server.start()
        }

        var baseURL: String { "http://127.0.0.1:\(port)" }
        /// Pagination tokens asked for, in order ("" for the first page).
        var paginationTokens: [String] { asked.tokens.withLock { $0 } }

        func stop() { server.shutdown(gracePeriod: .seconds(1)) }
    }

    /// Past the 1,000 pages the old recovery gave up at. `make test` serves one notification a page (1,025 in all:
    /// verifying each signature is what costs, about 7 ms in a debug build); `LINKOUT_RECOVERY_PAGE_SIZE=20` plays
    /// the 20,500 notifications of the volume the old pass lost, in a few minutes.
    static let pages = 1_025
    static let pageSize = ProcessInfo.processInfo.environment["LINKOUT_RECOVERY_PAGE_SIZE"].flatMap { Int($0) } ?? 1
    static let total = pages * pageSize
    static let failingPage = 600

    /// A ledger, the notification parts wired to two fake history servers, and the signed payloads.
    final class Setup {
        let directory: URL
        let production: PagedHistoryServer
        let sandbox: PagedHistoryServer
        let ledger: Ledger
        let notifications: AppStoreNotifications

        /// On the PostgreSQL server under test when there is one (the progress table's SQL runs on both), unless
        /// `sqliteOnly`: the volume run stays on SQLite, where the PostgreSQL pass would only repeat it slower.
        init(count: Int, failingPage: Int?, sqliteOnly: Bool = false) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-volume-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let signer = try NotificationSigner()
            // Each notification once, with its own notificationUUID, as Apple keeps them.
            let payloads = try (0..<count).map { index in
                try signer.sign(
                    NotificationSigner.tokenPayload(
                        subtype: "UNREPORTED",
                        externalPurchaseId: "bulk-\(index)",
                        uuid: String(format: "00000000-0000-4000-8000-%012d", index)
                    )
                )
            }
            production = try PagedHistoryServer(
                payloads: payloads,
                pageSize: NotificationRecoveryVolumeTests.pageSize,
                failingPage: failingPage
            )
            sandbox = try PagedHistoryServer(payloads: [], pageSize: NotificationRecoveryVolumeTests.pageSize)
            let keyFile = directory.appendingPathComponent("AuthKey.p8")
            try Data(try ES256Key.generate().privateKeyPEM().utf8).write(to: keyFile)
            var configuration = Configuration()
            configuration.storage.dataDir = directory.appendingPathComponent("data").path
            configuration.apple.issuerId = "57246542-96fe-1a63e053-0824d011072a"
            configuration.apple.keyId = "2X9R4HXF34"
            configuration.apple.privateKeyFile = keyFile.path
            configuration.apple.productionURL = production.baseURL
            configuration.apple.sandboxURL = sandbox.baseURL
            configuration.apple.notificationRootCertificates = [try signer.writeRoot(to: directory)]
            configuration.storage.durability = "normal"
            if !sqliteOnly { configuration.storage.postgresURL = try TestDatabase.postgresURL(for: directory.path) }
            ledger = try configuration.storage.openLedger()
            notifications = try AppStoreNotifications(
                configuration: configuration,
                ledger: ledger,
                logger: Logger(label: "test", level: .critical)
            )
        }

        deinit {
            ledger.close()
            production.stop()
            sandbox.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// The daily pass that failed part-way finishes its own window first, from the stored page, and the next
    /// pass starts from that window's end.
    @Test func theDailyPassFinishesAnInterruptedWindowFromItsStoredPage() throws {
        let setup = try Setup(count: 3 * Self.pageSize, failingPage: 2)
        let start = Clock.system.nowMilliseconds()
        setup.notifications.historyPassIfDue(now: start)
        let end = start + 86_400_000
        setup.notifications.historyPassIfDue(now: end)
        #expect(try setup.ledger.settings.setting(named: "last_history_pass") == String(start))
        #expect(try setup.ledger.notifications.notifications().count == Self.pageSize)
        setup.notifications.historyPassIfDue(now: end + 3_600_000)
        #expect(setup.production.paginationTokens == ["", "page-2", "page-2", "page-3"])
        #expect(try setup.ledger.settings.setting(named: "last_history_pass") == String(end))
        #expect(try setup.ledger.notifications.notifications(limit: 1000).count == 3 * Self.pageSize)
        #expect(try setup.ledger.notifications.historyCheckpoints().isEmpty)
    }

    /// A stored pagination token Apple refuses (how long it honours one is not documented) starts the window
    /// again from its first page; what was stored already is recognised as such.
    @Test func aRefusedStoredTokenStartsTheWindowAgain() throws {
        let setup = try Setup(count: 2 * Self.pageSize, failingPage: nil)
        let now = Clock.system.nowMilliseconds()
        let since = now - 86_400_000
        for environment in [Environment.production, .sandbox] {
            try setup.ledger.notifications.saveHistoryCheckpoint(
                HistoryCheckpoint(
                    bundleId: "com.example",
                    environment: environment,
                    startDate: since,
                    endDate: now,
                    paginationToken: environment == .production ? "expired" : nil,
                    pages: 7,
                    fetched: 140,
                    updatedAt: since
                )
            )
        }
        let summary = setup.notifications.recover(since: since, until: now)
        #expect(summary.failures == [])
        #expect(setup.production.paginationTokens == ["expired", "", "page-2"])
        #expect(setup.sandbox.paginationTokens.isEmpty)
        #expect(summary.stored == 2 * Self.pageSize)
        #expect(try setup.ledger.notifications.historyCheckpoints().isEmpty)
    }

    @Test func pastAThousandPagesAFailureHalfWayKeepsWhatWasDoneAndTheRerunResumes() throws {
        let setup = try Setup(count: Self.total, failingPage: Self.failingPage, sqliteOnly: true)
        let (production, sandbox, ledger, notifications) = (
            setup.production, setup.sandbox, setup.ledger, setup.notifications
        )
        let now = Clock.system.nowMilliseconds()
        let since = now - 2 * 86_400_000

        // The first run stops at the failing page: what came before is stored, acted on and kept.
        let first = notifications.recover(since: since, until: now)
        let before = (Self.failingPage - 1) * Self.pageSize
        #expect(first.failures.count == 1)
        #expect(first.pages == Self.failingPage - 1 + 1)  // and the sandbox's one empty page
        #expect(first.stored == before)
        #expect(first.processed == before)
        #expect(try ledger.notifications.notifications(unprocessedOnly: true).isEmpty)
        let kept = try ledger.notifications.historyCheckpoints()
        #expect(kept.first { $0.environment == .production }?.paginationToken == "page-\(Self.failingPage)")
        #expect(kept.first { $0.environment == .sandbox }.map { $0.paginationToken == nil } == true)

        // The same window again goes on from the stored page, not from the first, and skips the finished sandbox.
        let askedBefore = production.paginationTokens.count
        let second = notifications.recover(since: since, until: now)
        #expect(second.failures == [])
        #expect(second.resumed == 1)
        #expect(production.paginationTokens.dropFirst(askedBefore).first == "page-\(Self.failingPage)")
        #expect(sandbox.paginationTokens == [""])
        #expect(second.stored == Self.total - before)
        #expect(second.duplicates == 0)
        #expect(second.processed == Self.total - before)
        #expect(try ledger.notifications.historyCheckpoints().isEmpty)

        // Every notification stored once and acted on once: one report per token.
        let stored = try ledger.notifications.notifications(limit: 2 * Self.total)
        #expect(stored.count == Self.total)
        #expect(stored.allSatisfy { $0.processedAt != nil && $0.outcome == .unrecognizedReported })
        let reports = try ledger.reports.reports(limit: 2 * Self.total)
        #expect(reports.count == Self.total)
        #expect(Set(reports.map(\.externalPurchaseId)).count == Self.total)
        #expect(reports.allSatisfy { $0.status == .unrecognizedToken })
    }
}
