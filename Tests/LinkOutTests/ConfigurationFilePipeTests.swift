import Foundation
import Testing

@testable import LinkOut

#if canImport(Glibc)
import Glibc
#endif

/// A named pipe given as a configuration or secret file: one nothing writes to held `serve` and `check` before
/// their first line, for good; one with a writer (`<(jq …)`) is read as before.
@Suite("Configuration files: pipes")
struct ConfigurationFilePipeTests {
    @Test func aNamedPipeNothingWritesToIsRefusedAtOnce() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-fifo-\(UUID())").path
        #expect(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        #expect(ConfigurationFile.contents(atPath: path, limit: 10) == .failure(.pipeWithoutWriter))
        let refused = #expect(throws: ConfigurationError.self) {
            try Configuration.load(environment: ["LINKOUT_ADMIN_TOKEN_FILE": path])
        }
        #expect(
            refused?.problem == "cannot read \(path): an empty pipe with no writer when it was read",
            "\(String(describing: refused))"
        )
    }

    /// Links that lead back to themselves read as "there is no such file".
    @Test func aSymbolicLinkLoopIsSaid() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-loop-\(UUID())").path
        #expect(symlink(path, path) == 0)
        defer { unlink(path) }
        #expect(ConfigurationFile.contents(atPath: path, limit: 10) == .failure(.symbolicLinkLoop))
    }

    /// Its writer still at work when the read begins (`<(jq …)`): the read waits for it, then takes it all.
    @Test func aPipeWithAWriterIsReadOnceItIsDone() throws {
        let pipe = Pipe()
        let writer = pipe.fileHandleForWriting
        let path = "/proc/self/fd/\(pipe.fileHandleForReading.fileDescriptor)"
        let started = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            started.wait()
            // The reader is waiting on the pipe by now, or soon: either way it must not see an early end.
            usleep(100_000)
            writer.write(Data("from-a-".utf8))
            usleep(50_000)
            writer.write(Data("pipe\n".utf8))
            try? writer.close()
        }
        started.signal()
        #expect(ConfigurationFile.contents(atPath: path, limit: 64) == .success(Data("from-a-pipe\n".utf8)))
    }
}
