import Foundation
import Synchronization
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

    private let process: ChildProcess
    private let arguments: [String]
    private let output = Pipe()
    private let errors = Pipe()
    /// What the process wrote so far. Both pipes are read all the time: a server that logs more than a pipe
    /// holds (64 KiB) must never block in `write(2)` because the test reads its output only at the end.
    private let outputBytes = Collected()
    private let errorBytes = Collected()
    /// Left once each pipe reached its end (the process and any child holding it have exited).
    private let drained = DispatchGroup()

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

    /// `launcher`: a program that runs linkout (`/usr/bin/nohup`), given linkout's path and `arguments`.
    init(_ arguments: [String], directory: URL? = nil, environment: [String: String] = [:], launcher: String? = nil)
        throws
    {
        self.arguments = arguments
        process = try ChildProcess(
            launcher ?? Self.executable.path,
            launcher == nil ? arguments : [Self.executable.path] + arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            directory: directory?.path,
            output: output.fileHandleForWriting.fileDescriptor,
            errors: errors.fileHandleForWriting.fileDescriptor
        )
        // The child has its own copies: with these closed, each pipe ends when the child (and any of its
        // children) has exited.
        try output.fileHandleForWriting.close()
        try errors.fileHandleForWriting.close()
        drain(output, into: outputBytes)
        drain(errors, into: errorBytes)
    }

    /// Bytes read from a pipe, appended by its reading thread.
    private final class Collected: Sendable {
        private let bytes = Mutex<[UInt8]>([])
        func append(_ data: Data) { bytes.withLock { $0.append(contentsOf: data) } }
        var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }
    }

    private func drain(_ pipe: Pipe, into bytes: Collected) {
        drained.enter()
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [drained] in
            defer { drained.leave() }
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { return }
                bytes.append(chunk)
            }
        }
    }

    /// Waits for stdout's "listening on" line and returns the port it names; throws when the process exits
    /// first or prints nothing within `seconds`.
    func waitForPort(within seconds: Double = 60) throws -> Int {
        var text = ""
        let printed = eventually(within: seconds) {
            text = outputBytes.text
            return text.contains("\n") || !process.isRunning
        }
        guard printed else { throw Failure(description: "linkout printed no port within \(seconds) s") }
        guard let line = text.split(separator: "\n").first(where: { $0.contains("listening on") }),
            let port = line.split(separator: ":").last.flatMap({ Int($0) })
        else {
            if !process.isRunning { throw Failure(description: "linkout exited before listening: \(stderrText())") }
            throw Failure(description: "no port in \(text)")
        }
        return port
    }

    /// The child's process id.
    var pid: Int32 { process.pid }

    func signal(_ number: Int32) {
        process.signal(number)
    }

    /// Waits for the exit and returns the status code. A process still running after `seconds` fails the test
    /// and is killed, so the test ends either way.
    func waitForExit(within seconds: Double = 60) -> Int32 {
        if !eventually(within: seconds, { !process.isRunning }) {
            Issue.record("linkout \(arguments) did not exit within \(seconds) s")
            process.signal(SIGKILL)
            guard eventually(within: 10, { !process.isRunning }) else { return -1 }
        }
        return process.waitForExit()
    }

    /// Everything the process printed on stdout, once it has exited.
    func stdoutText() -> String {
        drained.wait()
        return outputBytes.text
    }

    /// Everything the process printed on stderr, once it has exited.
    func stderrText() -> String {
        drained.wait()
        return errorBytes.text
    }

    deinit {
        if process.isRunning {
            process.signal(SIGKILL)
            process.waitForExit()
        }
    }
}
