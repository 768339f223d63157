import Crypto
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
                let page = Int(token.dropFirst("page-".count)) ?? 1
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

    static let total = 20_500
    static let pageSize = 20
    static let failingPage = 600

    @Test func moreThanTwentyThousandNotificationsSurviveAFailureHalfWayAndTheRerunResumes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-volume-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let signer = try NotificationSigner()
        // Each notification once, with its own notificationUUID, as Apple keeps them.
        let payloads = try (0..<Self.total).map { index in
            try signer.sign(
                NotificationSigner.tokenPayload(
                    subtype: "UNREPORTED",
                    externalPurchaseId: "bulk-\(index)",
                    uuid: String(format: "00000000-0000-4000-8000-%012d", index)
                )
            )
        }
        let production = try PagedHistoryServer(
            payloads: payloads,
            pageSize: Self.pageSize,
            failingPage: Self.failingPage
        )
        defer { production.stop() }
        let sandbox = try PagedHistoryServer(payloads: [], pageSize: Self.pageSize)
        defer { sandbox.stop() }
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
        let ledger = try Ledger(directory: configuration.storage.dataDir, durability: .normal)
        defer { ledger.close() }
        let notifications = try AppStoreNotifications(
            configuration: configuration,
            ledger: ledger,
            logger: Logger(label: "test", level: .critical)
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
        #expect(try ledger.notifications(unprocessedOnly: true).isEmpty)
        let kept = try ledger.historyCheckpoints()
        #expect(kept.first { $0.environment == "production" }?.paginationToken == "page-\(Self.failingPage)")
        #expect(kept.first { $0.environment == "sandbox" }.map { $0.paginationToken == nil } == true)

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
        #expect(try ledger.historyCheckpoints().isEmpty)

        // Every notification stored once and acted on once: one report per token.
        let stored = try ledger.notifications(limit: 2 * Self.total)
        #expect(stored.count == Self.total)
        #expect(stored.allSatisfy { $0.processedAt != nil && $0.outcome == "unrecognized_reported" })
        let reports = try ledger.reports(limit: 2 * Self.total)
        #expect(reports.count == Self.total)
        #expect(Set(reports.map(\.externalPurchaseId)).count == Self.total)
        #expect(reports.allSatisfy { $0.status == "UNRECOGNIZED_TOKEN" })
    }
}
