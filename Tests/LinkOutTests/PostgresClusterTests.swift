import Dispatch
import Domain
import ExternalPurchase
import Foundation
import Storage
import Synchronization
import TestSupport
import Testing

@testable import LinkOut

#if canImport(Glibc)
import Glibc
#endif

/// Two `linkout serve` processes on one PostgreSQL database behind a pretend load balancer, one of them killed
/// mid-run and restarted: no acknowledged visit is lost and every token reaches Apple in one report. Runs in
/// the PostgreSQL pass of `make test` (it needs `LINKOUT_TEST_POSTGRES_URL`; the SQLite pass skips it by name).
@Suite("two instances on PostgreSQL", .serialized)
struct PostgresClusterTests {
    /// The outbox lease: short, so the killed instance's claimed reports are taken over within the test, yet
    /// long enough that a live instance's claims, waiting behind a slow fake Apple on a loaded machine, stay its own.
    static let leaseSeconds = 15

    @Test func twoInstancesOneKilledLoseNoVisitAndReportEachTokenOnce() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-cluster-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try #require(
            try TestDatabase.postgresURL(for: directory.path),
            "LINKOUT_TEST_POSTGRES_URL must name the test server"
        )
        let apple = try LiveReportingTests.Setup()
        let config = try Self.writeConfiguration(in: directory, apple: apple)
        let environment = ["LINKOUT_DATABASE_URL": url, "LINKOUT_LOG_LEVEL": "warning"]
        func start() throws -> LinkOutProcess {
            try LinkOutProcess(["serve", "--config", config.path, "--port", "0"], environment: environment)
        }

        // Both start together: the migrations run once, under the advisory lock.
        let first = try start()
        var second = try start()
        let ports = Mutex([try first.waitForPort(), try second.waitForPort()])
        let acknowledged = Mutex<[String]>([])
        let refusals = Mutex<[String]>([])
        let sent = Atomic<Int>(0)

        /// Sends `count` landings from four clients, alternating between the instances; a landing the chosen
        /// instance cannot take (it was just killed) goes to the other one, as a load balancer retries.
        func land(_ count: Int) {
            DispatchQueue.concurrentPerform(iterations: 4) { client in
                for index in 0..<(count / 4) {
                    let id = UUID().uuidString.lowercased()
                    let target = Self.landingTarget(externalPurchaseId: id)
                    let choices = ports.withLock { $0 }
                    let preferred = (client + index) % 2
                    for port in [choices[preferred], choices[1 - preferred]] {
                        do {
                            let status = try Self.landing(target, port: port)
                            if status == 303 {
                                acknowledged.withLock { $0.append(id) }
                                break
                            }
                            refusals.withLock { $0.append("\(port): \(status)") }
                        } catch {
                            refusals.withLock { $0.append("\(port): \(error)") }
                        }
                    }
                    sent.add(1, ordering: .relaxed)
                }
            }
        }

        land(800)
        // The kill lands while the next 600 are under way.
        let killer = DispatchGroup()
        killer.enter()
        let victim = second.pid
        Thread.detachNewThread {
            defer { killer.leave() }
            _ = eventually(within: 60) { sent.load(ordering: .relaxed) >= 900 }
            kill(victim, SIGKILL)
        }
        land(600)
        killer.wait()
        #expect(second.waitForExit(within: 10) == SIGKILL)
        second = try start()
        let restartedPort = try second.waitForPort()
        ports.withLock { $0[1] = restartedPort }
        land(600)

        let ids = acknowledged.withLock { $0 }
        #expect(ids.count == 2_000, "every landing was acknowledged by one instance or the other")
        // Every token reaches Apple; the killed instance's claimed reports after its lease ends.
        let wanted = Set(ids)
        let allReported = eventually(within: 90) {
            wanted.isSubset(of: Set(apple.apple.received.compactMap { $0.report?.externalPurchaseId.rawValue }))
        }
        #expect(allReported)

        let ledger = try Ledger(postgres: PostgresTarget(url: url, password: nil))
        defer { ledger.close() }
        let missing = try ids.filter { try ledger.tokens.token(ExternalPurchaseID($0)) == nil }
        #expect(missing.isEmpty, "\(missing.count) acknowledged visits missing from the ledger: \(missing.prefix(3))")

        // Once: one report (one requestIdentifier) per token. A send the killed instance had in flight may be
        // repeated by the instance that took its lease over, with the same requestIdentifier (Apple treats that
        // as the same report); at most one per sender thread.
        var identifiers: [String: Set<String>] = [:]
        var sends = 0
        for request in apple.apple.received {
            guard let report = request.report else { continue }
            identifiers[report.externalPurchaseId.rawValue, default: []].insert(report.requestIdentifier.rawValue)
            sends += 1
        }
        let twice = identifiers.filter { $0.value.count != 1 }
        #expect(twice.isEmpty, "tokens in more than one report: \(twice.keys.prefix(5))")
        #expect(sends - identifiers.count <= 16, "\(sends - identifiers.count) repeated sends")
        print(
            "cluster: \(ids.count) acknowledged, \(refusals.withLock { $0.count }) tries refused by the killed "
                + "instance and retried, \(identifiers.count) tokens reported, \(sends) sends"
        )

        for process in [first, second] { process.signal(SIGTERM) }
        for process in [first, second] {
            let status = process.waitForExit(within: 20)
            #expect(status == 0, "exit \(status): \(String(process.stderrText().suffix(1_500)))")
        }
    }

    static func landingTarget(externalPurchaseId: String) -> String {
        var token = TokenMinter.mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: false,
            tokenType: nil,
            nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000)
        )
        token.externalPurchaseId = ExternalPurchaseID(externalPurchaseId)
        return "/?externalPurchaseToken=\(TokenMinter.encode(token))&bundleId=com.example"
    }

    static func landing(_ target: String, port: Int) throws -> Int {
        try RawClient(port: port).roundTrip("GET \(target) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").status
    }

    /// The repository's config.json with the fake Apple, reports due at once, every second, and short leases.
    static func writeConfiguration(in directory: URL, apple: LiveReportingTests.Setup) throws -> URL {
        let base = try Data(contentsOf: LiveApplication.repositoryRoot.appendingPathComponent("config.json"))
        var root = try #require(try JSONSerialization.jsonObject(with: base) as? [String: Any])
        root["server"] = [
            "host": "127.0.0.1", "publicURL": "http://127.0.0.1",
            "publicDir": LiveApplication.repositoryRoot.appendingPathComponent("Public").path,
            // Four test clients on one address, thousands of landings: no per-address limits here.
            "rateLimitPerSecond": 0,
        ]
        root["storage"] = ["dataDir": directory.appendingPathComponent("data").path, "leaseSeconds": leaseSeconds]
        root["apple"] = [
            "issuerId": "57246542-96fe-1a63e053-0824d011072a", "keyId": "2X9R4HXF34",
            "privateKeyFile": apple.keyFile.path, "productionURL": apple.apple.baseURL,
            "sandboxURL": apple.apple.baseURL,
        ]
        // A send's time limit below the lease, as the configuration requires.
        root["reporting"] = ["noLineItemAfterSeconds": 0, "pollIntervalSeconds": 1, "requestTimeoutSeconds": 10]
        let file = directory.appendingPathComponent("config.json")
        try JSONSerialization.data(withJSONObject: root).write(to: file)
        return file
    }
}
