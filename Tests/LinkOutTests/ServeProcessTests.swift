import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing

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
        let badFlag = try LinkOutProcess(["serve", "--port", "99999"])
        #expect(badFlag.waitForExit() == 2)
        #expect(badFlag.stderrText().contains("--port"))
    }

    /// SIGTERM while eight clients hammer the server with keep-alive requests for a 256 KiB file: the process
    /// exits 0, and every response a client started to receive arrived whole.
    @Test func sigtermUnderLoadExits0AndCutsNoResponseInHalf() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let publicDir = directory.appendingPathComponent("public")
        try FileManager.default.createDirectory(at: publicDir, withIntermediateDirectories: true)
        try Data(repeating: 0x61, count: 256 * 1024).write(to: publicDir.appendingPathComponent("big.txt"))
        let config = directory.appendingPathComponent("config.json")
        try Data(#"{"server": {"host": "127.0.0.1", "publicDir": "\#(publicDir.path)"}}"#.utf8).write(to: config)
        let server = try LinkOutProcess(["serve", "--config", config.path, "--port", "0", "--data-dir", directory.path])
        let port = try server.waitForPort()

        let completed = Atomic<Int>(0)
        let cut = Mutex<[String]>([])
        let finished = DispatchGroup()
        for _ in 0..<8 {
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                guard let client = try? RawClient(port: port) else { return }
                while true {
                    do {
                        let response = try client.roundTrip("GET /static/big.txt HTTP/1.1\r\nHost: t\r\n\r\n")
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
        while completed.load(ordering: .relaxed) < 200 { usleep(1000) }  // polls progress; not a race guard
        server.signal(SIGTERM)
        finished.wait()
        #expect(server.waitForExit() == 0)
        #expect(cut.withLock { $0 } == [])
        #expect(completed.load(ordering: .relaxed) >= 200)
    }
}
