import Crypto
import Domain
import ExternalPurchase
import Foundation
import HTTPServer
import Lifecycle
import Logging
import Storage
import Testing

@testable import LinkOut

/// Drain time of the report outbox against a fake Apple that answers in 50 ms and leaves a share of calls
/// hanging until the client's timeout. Off in normal test runs; `bench/reporting.sh` turns it on with
/// `LINKOUT_BENCH_REPORTS` (and `LINKOUT_BENCH_HANG_PERCENT`, `LINKOUT_BENCH_TIMEOUT`, `LINKOUT_BENCH_CONCURRENCY`).
@Suite("Reporting benchmark")
struct ReportingBenchmark {
    static let environment = ProcessInfo.processInfo.environment
    static let enabled = environment["LINKOUT_BENCH_REPORTS"] != nil

    /// Answers `PUT /externalPurchase/v1/reports` with 200 after 50 ms, or after `hang` for `hangPercent`% of
    /// calls (past the client's timeout, so the client gives up first).
    final class SlowApple: Sendable {
        let port: Int
        private let server: HTTPServer

        init(hangPercent: Int, hang: Duration) throws {
            var configuration = HTTPServer.Configuration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            configuration.eventLoopCount = 1
            configuration.workerThreads = 400
            configuration.maxConnections = 2_000
            var router = Router()
            let hangMicroseconds = UInt32(hang.components.seconds * 1_000_000)
            router.add("PUT", "/externalPurchase/v1/reports") { _ in
                usleep(Int.random(in: 0..<100) < hangPercent ? hangMicroseconds : 50_000)
                return HTTPResponse(status: .ok, body: Array("{}".utf8))
            }
            server = HTTPServer(
                configuration: configuration,
                router: router,
                logger: Logger(label: "b", level: .critical)
            )
            port = try server.start()
        }

        func stop() { server.shutdown(gracePeriod: .seconds(1)) }
    }

    @Test(.enabled(if: enabled)) func drain() throws {
        let count = Int(Self.environment["LINKOUT_BENCH_REPORTS"] ?? "") ?? 1_000
        let hangPercent = Int(Self.environment["LINKOUT_BENCH_HANG_PERCENT"] ?? "") ?? 0
        let timeout = Int64(Self.environment["LINKOUT_BENCH_TIMEOUT"] ?? "") ?? 15
        let concurrency = Int64(Self.environment["LINKOUT_BENCH_CONCURRENCY"] ?? "") ?? 16
        let apple = try SlowApple(hangPercent: hangPercent, hang: .seconds(timeout + 1))
        defer { apple.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = try ES256Key.generate()
        let keyFile = directory.appendingPathComponent("AuthKey.p8")
        try Data(try key.privateKeyPEM().utf8).write(to: keyFile)
        var configuration = Configuration()
        configuration.storage.dataDir = directory.appendingPathComponent("data").path
        configuration.apple.issuerId = "57246542-96fe-1a63e053-0824d011072a"
        configuration.apple.keyId = "2X9R4HXF34"
        configuration.apple.privateKeyFile = keyFile.path
        configuration.apple.productionURL = "http://127.0.0.1:\(apple.port)"
        configuration.apple.sandboxURL = configuration.apple.productionURL
        configuration.reporting.noLineItemAfterSeconds = 0
        configuration.reporting.requestTimeoutSeconds = timeout
        configuration.reporting.concurrency = concurrency
        let ledger = try Ledger(directory: configuration.storage.dataDir, durability: .full)
        defer { ledger.close() }
        let created = Clock.system.nowMilliseconds() - 3_600_000
        for index in 0..<count {
            let id = "bench-\(index)"
            _ = try ledger.tokens.recordForwardedToken(
                TokenFields(
                    ExternalPurchaseToken(
                        appAppleId: 1_234_567_890,
                        bundleId: "com.example",
                        tokenCreationDate: created,
                        externalPurchaseId: ExternalPurchaseID(id)
                    ),
                    source: .app
                ),
                checkoutId: "c-\(id)",
                at: created
            )
        }
        let service = ReportingService(
            configuration: configuration,
            ledger: ledger,
            logger: Logger(label: "bench", level: .error)
        )
        let start = ContinuousClock.now
        let deadline = start + .seconds(1_800)
        var passes = 0
        while ContinuousClock.now < deadline {
            service.tick()
            passes += 1
            let summary = try ledger.reports.reportSummary()
            if summary.counts[.accepted] == Int64(count) { break }
            // Hung reports wait out their backoff; the next pass starts when the first is due.
            let next = try ledger.reports.dueReports(now: .max, limit: 1).first?.nextAttemptAt ?? 0
            let wait = max(0, next - Clock.system.nowMilliseconds())
            usleep(UInt32(min(wait, 60_000)) * 1_000)
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let accepted = try ledger.reports.reportSummary().counts[.accepted] ?? 0
        // When the reports Apple answered at the first try were all in: the drain without the retry tail.
        let startedAt = Clock.system.nowMilliseconds() - Int64(seconds * 1000)
        let firstTry = try ledger.reports.reports(limit: count).filter { $0.attempts == 1 }.compactMap(\.acceptedAt)
            .sorted()
        let firstTrySeconds = Double((firstTry.last ?? startedAt) - startedAt) / 1000
        print(
            "BENCH reports=\(count) accepted=\(accepted) hang=\(hangPercent)% timeout=\(timeout)s "
                + "concurrency=\(concurrency) passes=\(passes) seconds=\(String(format: "%.1f", seconds)) "
                + "first-try-done=\(String(format: "%.1f", firstTrySeconds))s "
                + "rate=\(String(format: "%.0f", Double(accepted) / seconds))/s"
        )
        #expect(accepted == Int64(count))
    }
}
