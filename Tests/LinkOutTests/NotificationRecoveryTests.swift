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

/// Get Notification History against a fake App Store Server API that pages its answers: what was missed is
/// stored and acted on exactly once, whatever arrives twice.
@Suite("Notification recovery")
struct NotificationRecoveryTests {
    /// `POST /inApps/v1/notifications/history`, answering page one and then, for `paginationToken=page-2`,
    /// page two; `PUT /externalPurchase/v1/reports` answers 200.
    final class FakeHistoryServer: Sendable {
        let port: Int
        private let server: HTTPServer
        private final class Queries: Sendable {
            let tokens = Mutex<[String]>([])
            /// Answer 503 (Apple down) while set.
            let failing = Mutex(false)
        }
        private let queries = Queries()

        init(pages: [[String]]) throws {
            var configuration = HTTPServer.Configuration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            configuration.eventLoopCount = 1
            configuration.workerThreads = 2
            var router = Router()
            let queries = self.queries
            router.post("/inApps/v1/notifications/history") { request in
                let token = request.queryValue("paginationToken")
                queries.tokens.withLock { $0.append(token ?? "") }
                guard request.headers["authorization"]?.hasPrefix("Bearer ") == true else {
                    return HTTPResponse(status: HTTPStatus(code: 401, reasonPhrase: "Unauthorized"))
                }
                if queries.failing.withLock({ $0 }) {
                    return HTTPResponse(status: HTTPStatus(code: 503, reasonPhrase: "Service Unavailable"))
                }
                let index = token.flatMap { Int($0.dropFirst("page-".count)) }.map { $0 - 1 } ?? 0
                let page = index < pages.count ? pages[index] : []
                let hasMore = index + 1 < pages.count
                let items = page.map { #"{"signedPayload":"\#($0)","sendAttempts":[]}"# }.joined(separator: ",")
                let next = hasMore ? #","paginationToken":"page-\#(index + 2)""# : ""
                let body = #"{"notificationHistory":[\#(items)],"hasMore":\#(hasMore)\#(next)}"#
                return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
            }
            router.add("PUT", "/externalPurchase/v1/reports") { _ in
                HTTPResponse(status: .ok, body: Array("{}".utf8))
            }
            server = HTTPServer(
                configuration: configuration,
                router: router,
                logger: Logger(label: "fake", level: .critical)
            )
            port = try server.start()
        }

        var baseURL: String { "http://127.0.0.1:\(port)" }
        var paginationTokens: [String] { queries.tokens.withLock { $0 } }
        func fail(_ failing: Bool) { queries.failing.withLock { $0 = failing } }

        func stop() { server.shutdown(gracePeriod: .seconds(1)) }
    }

    final class Setup {
        let directory: URL
        let signer: NotificationSigner
        let fake: FakeHistoryServer
        let ledger: Ledger
        let notifications: AppStoreNotifications
        let payloads: [String]

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-recover-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let signer = try NotificationSigner()
            self.signer = signer
            let payloads = try (0..<3).map { index in
                try signer.sign(
                    NotificationSigner.tokenPayload(subtype: "UNREPORTED", externalPurchaseId: "missed-\(index)")
                )
            }
            self.payloads = payloads
            // Page one: the first two; page two: the third, and the first again (history overlaps).
            fake = try FakeHistoryServer(pages: [[payloads[0], payloads[1]], [payloads[2], payloads[0]]])
            let key = try ES256Key.generate()
            let keyFile = directory.appendingPathComponent("AuthKey.p8")
            try Data(try key.privateKeyPEM().utf8).write(to: keyFile)
            var configuration = Configuration()
            configuration.storage.dataDir = directory.appendingPathComponent("data").path
            configuration.apple.issuerId = "57246542-96fe-1a63e053-0824d011072a"
            configuration.apple.keyId = "2X9R4HXF34"
            configuration.apple.privateKeyFile = keyFile.path
            configuration.apple.productionURL = fake.baseURL
            configuration.apple.sandboxURL = fake.baseURL
            configuration.apple.notificationRootCertificates = [try signer.writeRoot(to: directory)]
            ledger = try Ledger(directory: configuration.storage.dataDir, durability: .normal)
            notifications = try AppStoreNotifications(
                configuration: configuration,
                ledger: ledger,
                logger: Logger(label: "test", level: .critical)
            )
        }

        deinit {
            ledger.close()
            fake.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test func historyAcrossTwoPagesIsActedOnExactlyOnce() throws {
        let setup = try Setup()
        // The first one was delivered before the outage.
        guard case .stored = try setup.notifications.receive(setup.payloads[0]) else {
            Issue.record("the delivered notification was not stored")
            return
        }
        let now = Clock.system.nowMilliseconds()
        let summary = setup.notifications.recover(since: now - 2 * 86_400_000, until: now)
        // Production and sandbox are asked (both on the fake here): two pages each.
        #expect(setup.fake.paginationTokens == ["", "page-2", "", "page-2"])
        #expect(summary.failures == [])
        #expect(summary.fetched == 8)
        #expect(summary.stored == 2)
        #expect(summary.duplicates == 6)
        #expect(summary.processed == 2)
        let stored = try setup.ledger.notifications.notifications()
        #expect(stored.count == 3)
        #expect(stored.allSatisfy { $0.processedAt != nil && $0.outcome == .unrecognizedReported })
        #expect(Set(stored.map(\.source)) == [.delivery, .history])
        for index in 0..<3 {
            let reports = try setup.ledger.reports.reports(for: "missed-\(index)")
            #expect(reports.map(\.status) == [.unrecognizedToken])
        }
        // A second run finds nothing new and acts on nothing.
        let again = setup.notifications.recover(since: now - 2 * 86_400_000, until: now)
        #expect(again.stored == 0)
        #expect(again.processed == 0)
        #expect(try setup.ledger.reports.reports(limit: 100).count == 3)
    }

    @Test func theDailyPassStartsItsClockThenFetchesOncePerDay() throws {
        let setup = try Setup()
        let now = Clock.system.nowMilliseconds()
        setup.notifications.historyPassIfDue(now: now)
        #expect(setup.fake.paginationTokens.isEmpty)
        #expect(try setup.ledger.settings.setting(named: "last_history_pass") == String(now))
        setup.notifications.historyPassIfDue(now: now + 3_600_000)
        #expect(setup.fake.paginationTokens.isEmpty)
        setup.notifications.historyPassIfDue(now: now + 86_400_000)
        #expect(setup.fake.paginationTokens.count == 4)
        #expect(try setup.ledger.settings.setting(named: "last_history_pass") == String(now + 86_400_000))
        #expect(try setup.ledger.notifications.notifications().count == 3)
    }

    /// A daily pass Apple fails (a 503 here; a 429 the same) is tried again after a minute, then two, doubling
    /// to an hour: not on every sweep, which asked Apple twice every poll interval while it was down.
    @Test func aFailedDailyPassBacksOffInsteadOfAskingOnEverySweep() throws {
        let setup = try Setup()
        let start = Clock.system.nowMilliseconds()
        setup.notifications.historyPassIfDue(now: start)
        setup.fake.fail(true)
        let due = start + 86_400_000
        setup.notifications.historyPassIfDue(now: due)
        let first = setup.fake.paginationTokens.count
        #expect(first > 0)
        setup.notifications.historyPassIfDue(now: due + 30_000)
        #expect(setup.fake.paginationTokens.count == first, "asked again a sweep later")
        setup.notifications.historyPassIfDue(now: due + 60_000)
        let second = setup.fake.paginationTokens.count
        #expect(second > first, "not asked again after a minute")
        setup.notifications.historyPassIfDue(now: due + 60_000 + 90_000)
        #expect(setup.fake.paginationTokens.count == second, "the second wait is two minutes")
        setup.fake.fail(false)
        setup.notifications.historyPassIfDue(now: due + 60_000 + 120_000)
        #expect(try setup.ledger.settings.setting(named: "last_history_pass") == String(due + 180_000))
    }
}
