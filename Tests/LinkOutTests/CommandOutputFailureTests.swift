import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A command whose output cannot be written (a full disk, a closed descriptor, a reader gone with SIGPIPE
/// ignored) says so and exits 1: it trapped (exit 132, a backtrace) after it had done its work.
@Suite("Command output that cannot be written")
struct CommandOutputFailureTests {
    @Test func aFullDiskUnderTheOutputIsSaidOnStandardError() throws {
        let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
        #expect(full >= 0)
        defer { close(full) }
        let errors = Pipe()
        let child = try ChildProcess(
            LinkOutProcess.executable.path,
            ["version"],
            output: full,
            errors: errors.fileHandleForWriting.fileDescriptor
        )
        try errors.fileHandleForWriting.close()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(child.waitForExit() == 1)
        #expect(
            said
                == "linkout: the output could not be written (No space left on device); what the command did is "
                + "done, and what it printed is lost\n"
        )
    }
}
