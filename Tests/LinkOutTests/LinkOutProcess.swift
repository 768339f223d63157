import Foundation

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

    /// Reads stdout until the "listening on" line and returns the port it names.
    func waitForPort() throws -> Int {
        var text = ""
        let handle = output.fileHandleForReading
        while !text.contains("\n") {
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

    /// Waits for the exit and returns the status code.
    func waitForExit() -> Int32 {
        process.waitUntilExit()
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
