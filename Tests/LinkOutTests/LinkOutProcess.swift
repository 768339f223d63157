import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The built `linkout` executable run as a child process, for what only a real process shows:
/// exit codes, signal handling, output.
final class LinkOutProcess {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()

    /// The executable beside the test bundle (both live in the build folder), or `LINKOUT_BINARY`.
    static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["LINKOUT_BINARY"] { return URL(fileURLWithPath: path) }
        let buildFolder = Bundle.main.bundleURL.deletingLastPathComponent()
        let candidates = [
            buildFolder.appendingPathComponent("linkout"),
            Bundle.main.bundleURL.appendingPathComponent("linkout"),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
                "linkout"
            ),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    init(_ arguments: [String], directory: URL? = nil, environment: [String: String] = [:]) throws {
        process.executableURL = Self.executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Reads stdout until the "listening on" line and returns the port it names; throws when the process exits
    /// first or prints nothing within `seconds`.
    func waitForPort(within seconds: Double = 60) throws -> Int {
        var text = ""
        let handle = output.fileHandleForReading
        let deadline = Date() + seconds
        while !text.contains("\n") {
            // poll(2) first, so a server that neither speaks nor exits cannot block the read forever.
            var ready = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let remaining = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
            guard remaining > 0, poll(&ready, 1, remaining) > 0 else {
                throw Failure(description: "linkout printed no port within \(seconds) s")
            }
            let chunk = handle.availableData
            guard !chunk.isEmpty else { throw Failure(description: "linkout exited before listening: \(stderrText())") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first(where: { $0.contains("listening on") }),
            let port = line.split(separator: ":").last.flatMap({ Int($0) })
        else { throw Failure(description: "no port in \(text)") }
        return port
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the exit and returns the status code. A process still running after `seconds` fails the test
    /// and is killed, so the test ends either way.
    func waitForExit(within seconds: Double = 60) -> Int32 {
        if !eventually(within: seconds, { !process.isRunning }) {
            Issue.record("linkout \(process.arguments ?? []) did not exit within \(seconds) s")
            kill(process.processIdentifier, SIGKILL)
            guard eventually(within: 10, { !process.isRunning }) else { return -1 }
        }
        return process.terminationStatus
    }

    func stdoutText() -> String {
        String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    func stderrText() -> String {
        String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
