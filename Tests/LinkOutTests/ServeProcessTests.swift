import Dispatch
import Domain
import ExternalPurchase
import Foundation
import HTTPServer
import Logging
import Storage
import Synchronization
import TestSupport
import Testing

@testable import LinkOut

#if canImport(Glibc)
import Glibc
#endif

/// `linkout serve` as a real process: configuration errors, and SIGTERM under load.
@Suite("linkout serve process")
struct ServeProcessTests {
    func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-serve-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// `linkout serve` on this machine's loopback, a port of the kernel's, `directory` as the data folder.
    static func serve(in directory: URL) throws -> (LinkOutProcess, Int) {
        let server = try LinkOutProcess(
            ["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", directory.path],
            directory: LiveApplication.repositoryRoot
        )
        return (server, try server.waitForPort())
    }

    @Test func aBadConfigurationExits2NamingTheField() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("config.json")
        try Data(#"{"server": {"port": "eighty"}}"#.utf8).write(to: file)
        let bad = try LinkOutProcess(["serve", "--config", file.path])
        #expect(bad.waitForExit() == 2)
        #expect(bad.stderrText().contains("server.port"))
        let missing = try LinkOutProcess(["serve", "--config", directory.appendingPathComponent("none.json").path])
        #expect(missing.waitForExit() == 2)
        #expect(missing.stderrText().contains("none.json"))
        try Data(#"{"apps": [{"bundleId": "a", "appAppleId": 1, "name": "A", "colour": "red"}]}"#.utf8).write(to: file)
        let unknown = try LinkOutProcess(["serve", "--config", file.path])
        #expect(unknown.waitForExit() == 2)
        #expect(unknown.stderrText().contains("apps[0].colour: unknown field"))
        let badFlag = try LinkOutProcess(["serve", "--port", "99999"])
        #expect(badFlag.waitForExit() == 2)
        #expect(badFlag.stderrText().contains("--port"))
        // A host that is no address here is the configuration's mistake too.
        let badHost = try LinkOutProcess([
            "serve", "--host", "no such host!", "--port", "0", "--data-dir", directory.appendingPathComponent("d").path,
        ])
        #expect(badHost.waitForExit() == 2)
        #expect(badHost.stderrText().contains("server.host"), "\(badHost.stderrText())")
        // An address, but not one of this machine's (TEST-NET-1): the same.
        let notHere = try LinkOutProcess([
            "serve", "--host", "192.0.2.10", "--port", "0", "--data-dir", directory.appendingPathComponent("e").path,
        ])
        #expect(notHere.waitForExit() == 2)
        #expect(notHere.stderrText().contains("server.host"), "\(notHere.stderrText())")
        for folder in ["d", "e"] {
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(folder).path))
        }
    }

    /// A second server told to use a port another one serves (a stop that failed before an upgrade) refuses to
    /// start: its loops' shared sockets would otherwise take half the connections into another ledger.
    @Test func aSecondServerOnAServedPortRefusesToStart() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try LinkOutProcess(
            ["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", directory.appendingPathComponent("a").path]
        )
        defer { first.signal(SIGTERM) }
        let port = try first.waitForPort()
        let second = try LinkOutProcess(
            [
                "serve", "--host", "127.0.0.1", "--port", String(port), "--data-dir",
                directory.appendingPathComponent("b").path,
            ]
        )
        defer { second.signal(SIGTERM) }
        #expect(second.waitForExit() != 0)
        #expect(second.stderrText().contains("is in use by another process"), "\(second.stderrText())")
        // Refused before its data folder was touched: a mistyped folder is not left with a new ledger.
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("b").path))
        let client = try RawClient(port: port)
        #expect(try client.roundTrip("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
    }

    /// `linkout check` passes the server address while the running server of its own data folder serves it, and
    /// fails it when another linkout does (this folder's server serving another port): before, both passed.
    @Test func theCheckTellsThisFoldersServerFromAnother() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func serve(_ folder: String) throws -> (LinkOutProcess, Int) {
            let process = try LinkOutProcess(
                [
                    "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir",
                    directory.appendingPathComponent(folder).path,
                ]
            )
            return (process, try process.waitForPort())
        }
        let (first, port) = try serve("a")
        defer { first.signal(SIGTERM) }
        let (second, _) = try serve("b")
        defer { second.signal(SIGTERM) }
        var configuration = Configuration()
        configuration.server.host = "127.0.0.1"
        configuration.server.port = port
        configuration.storage.dataDir = directory.appendingPathComponent("a").path
        let own = PreflightCheck(configuration: configuration).serverAddress()
        #expect(own.passed && own.detail.contains("(process \(first.pid), on "), "\(own.line)")
        configuration.storage.dataDir = directory.appendingPathComponent("b").path
        let other = PreflightCheck(configuration: configuration).serverAddress()
        #expect(
            !other.passed && other.detail.contains("is served by process \(first.pid), not by the server on"),
            "\(other.line)"
        )

        // Another program answering `/healthz` there as linkout does (this test's own stub) is not this folder's
        // server either.
        var router = Router()
        router.get("/healthz", execution: .eventLoop) { _ in .text("ok\n") }
        var stubConfiguration = HTTPServer.Configuration()
        stubConfiguration.host = "127.0.0.1"
        stubConfiguration.port = 0
        stubConfiguration.eventLoopCount = 1
        let stub = HTTPServer(
            configuration: stubConfiguration,
            router: router,
            logger: Logger(label: "stub", level: .critical)
        )
        configuration.server.port = try stub.start()
        defer { stub.shutdown(gracePeriod: .seconds(1)) }
        configuration.storage.dataDir = directory.appendingPathComponent("a").path
        let stranger = PreflightCheck(configuration: configuration).serverAddress()
        #expect(
            !stranger.passed && stranger.detail.contains("is served by process \(getpid()), not by the server on"),
            "\(stranger.line)"
        )
    }

    /// Landings go first: the thread that folds journaled visits into the SQLite tables runs `writerNiceness`
    /// levels below the event loops and the journal (Linux keeps a nice value per thread), and each of the
    /// server's threads carries its name.
    @Test func theLedgersWriterYieldsTheCPUToLandings() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LinkOutProcess(
            ["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", directory.appendingPathComponent("d").path]
        )
        defer {
            server.signal(SIGTERM)
            _ = server.waitForExit()
        }
        _ = try server.waitForPort()
        // Each thread's name and nice value (`/proc/<pid>/task/<tid>/stat`: the 19th field, after the name).
        let tasks = "/proc/\(server.pid)/task"
        func threads() -> [String: Int] {
            var niceness: [String: Int] = [:]
            for tid in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
                guard let stat = FileManager.default.contents(atPath: "\(tasks)/\(tid)/stat"),
                    let comm = FileManager.default.contents(atPath: "\(tasks)/\(tid)/comm")
                else { continue }
                let text = String(decoding: stat, as: UTF8.self)
                guard let close = text.lastIndex(of: ")") else { continue }
                let fields = text[text.index(after: close)...].split(separator: " ")
                let name = String(decoding: comm, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                niceness[name] = fields.count > 16 ? Int(fields[16]) : nil
            }
            return niceness
        }
        // A thread names itself as it starts, which on a loaded machine may come a moment after the port line.
        var niceness: [String: Int] = [:]
        #expect(
            eventually(within: 30) {
                niceness = threads()
                return ["loop-0", "journal", "ingester", "ledger-writer"].allSatisfy { niceness[$0] != nil }
            }
        )
        // Relative to the server's other threads (the test runner may itself run niced).
        let base = try #require(niceness["loop-0"], "\(niceness)")
        #expect(niceness["ledger-writer"] == min(19, base + Int(Ledger.writerNiceness)), "\(niceness)")
        for name in ["journal", "ingester"] {
            #expect(niceness[name] == base, "\(name): \(niceness)")
        }
    }

    /// SIGTERM while eight clients hammer the server with keep-alive requests for a 256 KiB file: the process
    /// exits 0, and every response a client started to receive arrived whole.
    @Test func sigtermUnderLoadExits0AndCutsNoResponseInHalf() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let publicDir = directory.appendingPathComponent("public")
        try FileManager.default.copyItem(
            at: LiveApplication.repositoryRoot.appendingPathComponent("Public"),
            to: publicDir
        )
        try Data(repeating: 0x61, count: 256 * 1024).write(to: publicDir.appendingPathComponent("big.css"))
        let config = directory.appendingPathComponent("config.json")
        try Data(#"{"server": {"host": "127.0.0.1", "publicDir": "\#(publicDir.path)"}}"#.utf8).write(to: config)
        let server = try LinkOutProcess(["serve", "--config", config.path, "--port", "0", "--data-dir", directory.path])
        let port = try server.waitForPort()

        let completed = Atomic<Int>(0)
        let cut = Mutex<[String]>([])
        let finished = DispatchGroup()
        // Clients stop here even if the server never does, so the test always ends.
        let clientDeadline = Date() + 120
        for _ in 0..<8 {
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                guard let client = try? RawClient(port: port) else { return }
                while Date() < clientDeadline {
                    do {
                        let response = try client.roundTrip("GET /static/big.css HTTP/1.1\r\nHost: t\r\n\r\n")
                        guard response.status == 200, response.body.count == 256 * 1024 else {
                            cut.withLock { $0.append("status \(response.status), \(response.body.count) bytes") }
                            return
                        }
                        completed.add(1, ordering: .relaxed)
                        if response.header("Connection") == "close" { return }
                    } catch let failure as RawClient.Failure {
                        if failure.partial { cut.withLock { $0.append(failure.description) } }
                        return
                    } catch {
                        return
                    }
                }
            }
        }
        // Polls progress; not a race guard. On a timeout the test fails, and still stops everything below.
        #expect(eventually(within: 60) { completed.load(ordering: .relaxed) >= 200 })
        server.signal(SIGTERM)
        #expect(finished.wait(timeout: .now() + 150) == .success)
        #expect(server.waitForExit() == 0)
        #expect(cut.withLock { $0 } == [])
        #expect(completed.load(ordering: .relaxed) >= 200)
    }

    /// Visits acknowledged with a 303 are committed: SIGKILL the server while four clients are landing fresh
    /// tokens, reopen the ledger, and find every acknowledged token in it.
    @Test func sigkillRightAfterAcknowledgementsLosesNoVisit() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let dataDir = directory.appendingPathComponent("data")
        let server = try LinkOutProcess(
            ["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", dataDir.path],
            directory: LiveApplication.repositoryRoot,
            environment: ["LINKOUT_RATE_LIMIT_PER_SECOND": "0"]  // four clients on one address, on purpose
        )
        let port = try server.waitForPort()
        let acknowledged = Mutex<[String]>([])
        let finished = DispatchGroup()
        for _ in 0..<4 {
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                guard let client = try? RawClient(port: port) else { return }
                for _ in 0..<500 {
                    let token = TokenMinter.mint(
                        bundleId: "com.example",
                        appAppleId: 1_234_567_890,
                        sandbox: false,
                        tokenType: nil,
                        nowMilliseconds: Int64(Date().timeIntervalSince1970 * 1000)
                    )
                    let target = "/?externalPurchaseToken=\(TokenMinter.encode(token))&bundleId=com.example"
                    guard let response = try? client.roundTrip("GET \(target) HTTP/1.1\r\nHost: t\r\n\r\n"),
                        response.status == 303
                    else { return }
                    acknowledged.withLock { $0.append(token.externalPurchaseId.rawValue) }
                }
            }
        }
        // Polls progress; not a race guard. On a timeout the test fails, and still stops everything below.
        #expect(eventually(within: 60) { acknowledged.withLock { $0.count } >= 200 })
        server.signal(SIGKILL)
        #expect(finished.wait(timeout: .now() + 60) == .success)
        #expect(server.waitForExit() != 0)
        let promised = Set(acknowledged.withLock { $0 })
        let ledger = try Ledger(directory: dataDir.path)
        defer { ledger.close() }
        let stored = Set(try ledger.tokens.tokens().map(\.token.externalPurchaseId.rawValue))
        #expect(promised.count >= 200)
        #expect(promised.subtracting(stored).isEmpty, "\(promised.subtracting(stored).count) acknowledged visits lost")
        print("SIGKILL after \(promised.count) acknowledged visits: \(stored.count) tokens on disk, none lost")
    }

    @Test func healthcheckExits0OnlyWhenTheServerAnswers() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (server, port) = try Self.serve(in: directory)
        let healthy = try LinkOutProcess(
            ["healthcheck", "--port", String(port)],
            directory: LiveApplication.repositoryRoot
        )
        #expect(healthy.waitForExit() == 0)
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)
        let unhealthy = try LinkOutProcess(
            ["healthcheck", "--port", String(port)],
            directory: LiveApplication.repositoryRoot
        )
        #expect(unhealthy.waitForExit() == 1)
        #expect(unhealthy.stderrText().hasPrefix("unhealthy: http://"), "\(unhealthy.stderrText())")
        #expect(!unhealthy.stderrText().contains("HTTPClientError"))
        let both = try LinkOutProcess(
            ["healthcheck", "--port", String(port), "--url", "http://127.0.0.1:\(port)/healthz"],
            directory: LiveApplication.repositoryRoot
        )
        #expect(both.waitForExit() == 2)
    }

    /// Out of file descriptors with clients still connecting, the server answers each newcomer 503 from a
    /// descriptor it keeps in reserve (`DescriptorShortage`), says so once a minute in its log, and serves again when
    /// connections close. It used to leave newcomers unanswered in the backlog while both event loops spun on the
    /// listener at full CPU.
    @Test func outOfFileDescriptorsANewcomerGets503AndServingResumes() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (server, port) = try Self.serve(in: directory)
        func descriptors() -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(server.pid)/fd").count) ?? 0
        }
        // Room for 16 connections beyond what the running server holds.
        let cap = descriptors() + 16
        // util-linux's prlimit: glibc's prlimit(2) wrapper is a GNU extension Swift's Glibc module does not show.
        let prlimit = try ChildProcess("/usr/bin/prlimit", ["--pid", String(server.pid), "--nofile=\(cap):\(cap)"])
        #expect(prlimit.waitForExit() == 0)

        // The warning is said at most once a minute, whatever is refused meanwhile (both loops refusing at once
        // said it twice: one's moment, taken before the other's warning, read as a minute after it): on a loaded
        // machine (the PostgreSQL tier) this test can run past a minute, and a second warning is then due.
        let shortageBegan = Date()
        var held: [RawClient] = []
        for _ in 0..<32 { held.append(try RawClient(port: port)) }
        #expect(eventually(within: 30) { descriptors() >= cap })
        // The ones served (the others were answered 503 and closed), each kept open after an answer.
        var served = held.filter {
            (try? $0.roundTrip("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status) == 200
        }
        held.removeAll()
        try #require(served.count >= 3)
        let newcomer = try RawClient(port: port, timeout: 10)
        newcomer.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try newcomer.readResponse().status == 503)
        // Bursts of newcomers at once reach both event loops together: each still gets its 503 (with a reserve
        // per loop, one loop's freed reserve went to the other's accept, and its share waited unanswered).
        for _ in 0..<3 {
            let burst = (0..<60).compactMap { _ in try? RawClient(port: port, timeout: 10) }
            for client in burst { client.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n") }
            #expect(burst.filter { (try? $0.readResponse().status) == 503 }.count == burst.count)
        }
        for _ in 0..<6 {
            let probe = try RawClient(port: port, timeout: 10)
            probe.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try probe.readResponse().status == 503)
        }

        // A landing on a connection already open cannot open the journal's file: refused, and `/readyz` says so
        // until descriptors are free again, then turns ready by itself, with no landing sent to clear it (it
        // stayed unready, and a balancer sends an unready server none).
        let landing = try served[0].roundTrip("GET \(DiskFullLandingTests.freshTarget()) HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(landing.status == 503 && landing.header("Retry-After") != nil)
        let unready = try served[1].roundTrip("GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(unready.status == 503 && unready.text.contains("Too many open files"), "\(unready.text)")
        // A static file there but not readable now is no 404 (browsers and proxies would keep that).
        let style = try served[2].roundTrip("GET /static/css/linkout.css HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(style.status == 503 && style.text.contains("Try again shortly"), "\(style.text)")

        served.removeAll()
        #expect(
            eventually(within: 30) {
                (try? RawClient(port: port).roundTrip("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status) == 200
            }
        )
        #expect(
            eventually(within: 30) {
                (try? RawClient(port: port).roundTrip("GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n").status) == 200
            }
        )
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)
        let warnings = server.stderrText().components(separatedBy: "cannot accept connections").count - 1
        let minutes = Int(Date().timeIntervalSince(shortageBegan) / 60)
        #expect((1...(1 + minutes)).contains(warnings), "\(warnings) warnings in \(minutes) full minute(s)")
    }

    /// A hangup (a closed terminal, a supervisor's reload) stops the server as SIGTERM does: drained, logged,
    /// exit 0; it killed the process before, with no word of it. Under nohup it stays ignored.
    @Test func sighupStopsTheServerAsSigtermDoesUnlessStartedUnderNohup() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LinkOutProcess(
            ["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", directory.path],
            directory: LiveApplication.repositoryRoot
        )
        _ = try server.waitForPort()
        server.signal(SIGHUP)
        #expect(server.waitForExit() == 0)
        #expect(server.stderrText().contains("SIGHUP") || server.stdoutText().contains("SIGHUP"))
        // Started under nohup, the hangup stays ignored, as nohup asked: the SIGTERM after it is what stops it.
        let detached = try LinkOutProcess(
            ["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", directory.path],
            directory: LiveApplication.repositoryRoot,
            launcher: "/usr/bin/nohup"
        )
        _ = try detached.waitForPort()
        detached.signal(SIGHUP)
        detached.signal(SIGTERM)
        #expect(detached.waitForExit() == 0)
        let log = detached.stderrText() + detached.stdoutText()
        #expect(log.contains(#""signal":"SIGTERM""#) && !log.contains("SIGHUP"), "\(log)")
    }

    /// A server listening on one address (IPv6 loopback here) is asked there, not on 127.0.0.1 where nothing
    /// answers: the container's health check must not call a running server unhealthy.
    @Test func healthcheckAsksTheAddressTheServerListensOn() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LinkOutProcess(
            ["serve", "--host", "::1", "--port", "0", "--data-dir", directory.path],
            directory: LiveApplication.repositoryRoot
        )
        defer {
            server.signal(SIGTERM)
            _ = server.waitForExit()
        }
        let port = try server.waitForPort()
        let healthy = try LinkOutProcess(
            ["healthcheck", "--port", String(port)],
            directory: LiveApplication.repositoryRoot,
            environment: ["LINKOUT_HOST": "::1"]
        )
        #expect(healthy.waitForExit() == 0, "\(healthy.stderrText())")
    }
}
