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
            refused?.problem == "cannot read \(path): a named pipe nothing writes to",
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

    @Test func aPipeWithAWriterIsRead() throws {
        let pipe = Pipe()
        pipe.fileHandleForWriting.write(Data("from-a-pipe\n".utf8))
        try pipe.fileHandleForWriting.close()
        let path = "/proc/self/fd/\(pipe.fileHandleForReading.fileDescriptor)"
        #expect(ConfigurationFile.contents(atPath: path, limit: 64) == .success(Data("from-a-pipe\n".utf8)))
    }
}
