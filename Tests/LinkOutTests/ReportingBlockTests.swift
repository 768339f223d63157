import Crypto
import Domain
import Foundation
import HTTPServer
import Lifecycle
import Logging
import Storage
import Synchronization
import TestSupport
import Testing

@testable import LinkOut

/// A 401 must not stop reporting until a restart: one report is tried every five minutes, a replaced key file
/// is picked up, and when Apple takes a report again everything waiting goes out. Through the real libcurl client
/// against the fake Apple, which checks each JWT's signature; time moves by the test clock.
@Suite("Reporting block")
struct ReportingBlockTests {
    final class LogLines: Sendable {
        let lines = Mutex<[String]>([])
        var sink: Logger.Sink { Logger.Sink { [self] line in lines.withLock { $0.append(line) } } }
        func critical() -> [String] { lines.withLock { $0 }.filter { $0.contains(#""level":"critical""#) } }
    }

    @Test func a401BlocksUntilTheReplacedKeyIsAcceptedThenEverythingGoesOut() throws {
        let clock = ManualClock()
        let log = LogLines()
        // The server starts with a key Apple does not know (revoked in App Store Connect, say).
        let elsewhere = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-key-\(UUID())")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let keyFile = elsewhere.appendingPathComponent("AuthKey.p8")
        try Data(try ES256Key.generate().privateKeyPEM().utf8).write(to: keyFile)
        let harness = try ReportingHarness(
            clock: clock.clock,
            logger: Logger(label: "test", level: .info, sink: log.sink)
        ) { $0.apple.privateKeyFile = keyFile.path }
        harness.production.checkSignatures()
        for id in ["a", "b", "c"] { try harness.record(id) }

        harness.service.tick()
        #expect(harness.production.received.count == 1)
        guard let block = harness.service.status.blocks.first, block.reason == .unauthorized else {
            Issue.record("expected a block, got \(harness.service.status)")
            return
        }
        #expect(Self.blockedGauge(harness, "unauthorized") == 1)
        #expect(Self.blockedGauge(harness, "undocumented_answer") == 0)
        let readiness = String(
            decoding: Readiness(ledger: harness.ledger, reporting: harness.service, clock: clock.clock).response()
                .body,
            as: UTF8.self
        )
        #expect(readiness.hasPrefix("ready\n"))
        #expect(readiness.contains("reporting: BLOCKED since"))
        // Another process on the ledger (`linkout report status`) sees the block too.
        let status = ReportingService(
            configuration: harness.configuration,
            ledger: harness.ledger,
            logger: .init(label: "cli", level: .critical)
        )
        #expect(status.status.description.hasPrefix("BLOCKED since"))

        // Within the five minutes nothing is sent; then one probe, still refused, and no new critical line.
        clock.advance(seconds: 60)
        harness.service.tick()
        #expect(harness.production.received.count == 1)
        clock.advance(seconds: 300)
        harness.service.tick()
        #expect(harness.production.received.count == 2)
        #expect(try harness.ledger.reports.reports(limit: 10, state: .pending).count == 3)
        #expect(log.critical().count == 1)

        // The operator puts the right key in place (renamed over the old file). The next look at the file, at
        // most a minute later, loads it and probes at once; Apple takes it, and the rest follow.
        try Data(try harness.key.privateKeyPEM().utf8).write(to: keyFile, options: .atomic)
        clock.advance(seconds: 61)
        harness.service.tick()
        #expect(harness.service.status == .running)
        #expect(try harness.ledger.reports.reports(limit: 10, state: .accepted).count == 3)
        #expect(harness.production.received.count == 5)
        #expect(harness.production.received.suffix(3).allSatisfy { $0.signatureValid })
        #expect(Self.blockedGauge(harness, "unauthorized") == 0)
        let critical = log.critical()
        #expect(critical.count == 2)
        #expect(critical.first?.contains("reporting blocked") == true)
        #expect(critical.last?.contains("reporting resumed") == true)
        let after = ReportingService(
            configuration: harness.configuration,
            ledger: harness.ledger,
            logger: .init(label: "cli", level: .critical)
        )
        #expect(after.status == .running)
    }

    /// Apple's refusal holds back only the app and environment it came for (the JWT names the app, each
    /// environment has its host): another app's reports, and the same app's in the other environment, go on; the
    /// refused ones wait, one of each probed every five minutes, and a restart keeps each block.
    @Test func aRefusalOfOneAppHoldsBackOnlyThatAppInThatEnvironment() throws {
        let harness = try ReportingHarness()
        // Apple refuses com.other's JWTs (an app outside the key's team), and the sandbox host answers 404.
        let refusesOther: @Sendable (FakeAppleServer.Received) -> FakeAppleServer.Behavior? = {
            $0.claims["bid"] == .string("com.other") ? .respond(status: 401) : nil
        }
        harness.production.respond(with: refusesOther)
        harness.sandbox.respond { _ in .respond(status: 404) }
        for id in ["o1", "o2", "o3"] { try harness.record(id, bundleId: "com.other") }
        try harness.record("SANDBOX_s1")
        try harness.record("SANDBOX_s2")
        for id in ["a1", "a2", "a3"] { try harness.record(id) }
        harness.service.tick()
        // The refused ones cost the calls the pass had in flight when the first refusal came, no more.
        let other = { harness.production.received.filter { $0.claims["bid"] == .string("com.other") }.count }
        let (otherCalls, sandboxCalls) = (other(), harness.sandbox.received.count)
        #expect((1...3).contains(otherCalls) && (1...2).contains(sandboxCalls))
        for id in ["a1", "a2", "a3"] { #expect(try harness.reports(id).first?.state == .accepted, "\(id)") }
        let otherScope = ReportingScope(environment: .production, bundleId: "com.other")
        let sandboxScope = ReportingScope(environment: .sandbox, bundleId: "com.example")
        #expect(harness.service.status.blocks.map(\.scope) == [sandboxScope, otherScope])
        #expect(harness.service.status.description.contains("(unauthorized) for com.other (production)"))
        // The app Apple takes goes on at the next pass; the refused ones are not tried again before their probe.
        try harness.record("a4")
        harness.service.tick()
        #expect(try harness.reports("a4").first?.state == .accepted)
        #expect(other() == otherCalls && harness.sandbox.received.count == sandboxCalls)
        // A restarted service keeps both blocks.
        let restarted = ReportingService(
            configuration: harness.configuration,
            ledger: harness.ledger,
            logger: Logger(label: "test", level: .critical)
        )
        #expect(restarted.status.blocks.map(\.scope) == [sandboxScope, otherScope])
        // Five minutes on, each block probes with one of its reports: Apple takes com.other's now, so all of it goes;
        // the sandbox host still answers 404, and its block stays.
        harness.production.respond { _ in nil }
        harness.service.tick(now: Clock.system.nowMilliseconds() + ReportingBlock.probeInterval + 1_000)
        for id in ["o1", "o2", "o3"] { #expect(try harness.reports(id).first?.state == .accepted, "\(id)") }
        #expect(harness.sandbox.received.count == sandboxCalls + 1)
        #expect(harness.service.status.blocks.map(\.scope) == [sandboxScope])
        #expect(try harness.reports("SANDBOX_s2").first?.state == .pending)
    }

    /// The running server says so where an operator looks: the dashboard's alert, `/metrics`, `/readyz`.
    @Test func theDashboardMetricsAndReadinessShowTheBlock() throws {
        let setup = try LiveReportingTests.Setup()
        setup.apple.checkSignatures()
        // A key Apple does not know.
        try Data(try ES256Key.generate().privateKeyPEM().utf8).write(to: setup.keyFile, options: .atomic)
        let live = try LiveApplication {
            setup.configure(&$0, grace: 0)
            $0.reporting.pollIntervalSeconds = 3600
            $0.adminToken = DashboardTests.adminToken
        }
        #expect(live.firstReportingPassIsOver())
        try live.recordAppToken("refused", now: Clock.system.nowMilliseconds())
        live.application.reporting.tick()
        guard case .blocked = live.application.reporting.status else {
            Issue.record("expected a block, got \(live.application.reporting.status)")
            return
        }
        let session = try DashboardTests.signIn(live)
        let page = try live.get("/admin", headers: ["Cookie": session]).text
        #expect(page.contains(#"<p class="error" role="alert">Reports are not reaching Apple. BLOCKED since"#))
        let metrics = try live.get("/metrics").text
        #expect(metrics.contains(#"linkout_reporting_blocked{reason="unauthorized"} 1"#))
        #expect(metrics.contains(#"linkout_reporting_blocked{reason="signing_failed"} 0"#))
        #expect(metrics.components(separatedBy: "# TYPE linkout_reporting_blocked gauge").count == 2)
        let readiness = try live.get("/readyz")
        #expect(readiness.status == 200)
        #expect(readiness.text.contains("reporting: BLOCKED since"))
    }

    /// A key file that changes into something unusable (half written, a wrong file) does not replace the key
    /// in use.
    @Test func anUnusableReplacementKeepsTheKeyInUse() throws {
        let clock = ManualClock()
        let harness = try ReportingHarness(clock: clock.clock)
        try Data("not a key".utf8).write(
            to: URL(fileURLWithPath: harness.configuration.apple.privateKeyFile),
            options: .atomic
        )
        clock.advance(seconds: 61)
        try harness.record("kept")
        harness.service.tick()
        #expect(harness.service.status == .running)
        #expect(try harness.reports("kept").first?.state == .accepted)
        #expect(harness.production.received.first?.signatureValid == true)
    }

    /// Another key written over the file while the key in use works (a rotation done as if the key ID stayed):
    /// every App Store Connect key has its own key ID, so Apple would refuse the new one under the old ID. The key
    /// in use stays, and the log says to set `apple.keyId` and restart.
    @Test func anotherKeyUnderTheSameKeyIDKeepsTheKeyInUse() throws {
        let clock = ManualClock()
        let log = LogLines()
        let harness = try ReportingHarness(
            clock: clock.clock,
            logger: Logger(label: "test", level: .info, sink: log.sink)
        )
        try Data(try ES256Key.generate().privateKeyPEM().utf8).write(
            to: URL(fileURLWithPath: harness.configuration.apple.privateKeyFile),
            options: .atomic
        )
        clock.advance(seconds: 61)
        try harness.record("kept")
        harness.service.tick()
        #expect(harness.service.status == .running)
        #expect(try harness.reports("kept").first?.state == .accepted)
        #expect(harness.production.received.allSatisfy { $0.signatureValid })
        #expect(log.lines.withLock { $0 }.contains { $0.contains("set apple.keyId to it and restart") })

        // Then Apple refuses one app (and, say, the key too, revoked): a key Apple took once is that key ID's key,
        // so the file's other key is still not taken.
        harness.production.respond { _ in .respond(status: 401) }
        try harness.record("after", bundleId: "com.other")
        clock.advance(seconds: 1)
        harness.service.tick()
        #expect(harness.service.status.blocks.first?.reason == .unauthorized)
        clock.advance(seconds: 61)
        harness.service.tick()
        #expect(harness.production.received.allSatisfy { $0.signatureValid })
    }

    /// A block that cannot be read at start (the database is gone) is said and counted, not taken for "not
    /// blocked" in silence. SQLite only: the database is taken away by removing its folder.
    @Test func aBlockThatCannotBeReadIsLoggedAndCounted() throws {
        let harness = try ReportingHarness()
        guard harness.configuration.storage.postgresURL == nil else { return }
        harness.ledger.close()
        try FileManager.default.removeItem(atPath: harness.configuration.storage.dataDir)
        let log = LogLines()
        let metrics = Metrics()
        let service = ReportingService(
            configuration: harness.configuration,
            ledger: harness.ledger,
            logger: Logger(label: "test", level: .info, sink: log.sink),
            metrics: metrics
        )
        #expect(service.status == .running)
        #expect(log.lines.withLock { $0 }.contains { $0.contains("reporting block could not be read") })
        // Apple's pause, read beside it, could not be read either: each is said and counted.
        #expect(log.lines.withLock { $0 }.contains { $0.contains("Apple's pause could not be read") })
        #expect(metrics.render().contains("linkout_reporting_storage_errors_total 2"))
    }

    static func blockedGauge(_ harness: ReportingHarness, _ reason: String) -> Int? {
        ReportGauges.sample(
            ledger: harness.ledger,
            reporting: harness.service,
            clock: .system,
            logger: Logger(label: "test", level: .critical)
        )
        .first { $0.name == "linkout_reporting_blocked" && $0.labels.first?.1 == reason }?.value
    }
}
