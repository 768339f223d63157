import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for tests. Foundation's `Process.run()` on Linux (Swift 6.3.1)
/// lists `/proc/self/fd` to close the parent's descriptors in the child, copying each `dirent` whole: a record at
/// the end of glibc's read buffer, before an unmapped page, crashes the test process now and then
/// (swift-corelibs-foundation #5472, fixed after this toolchain). Here the child closes them itself
/// (`posix_spawn_file_actions_addclosefrom_np`), starts in a process group of its own with no signal blocked
/// and every signal at its default, as a process started from a shell would.
public final class ChildProcess: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let pid: Int32
    /// The `waitpid` status once the child has been reaped.
    private let status = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments`. `input`, `output` and `errors` are descriptors the child gets as its
    /// stdin, stdout and stderr (nil: `/dev/null`); the caller closes its own copies once this returns. Without an
    /// `environment`, the child gets this process's.
    public init(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        directory: String? = nil,
        input: Int32? = nil,
        output: Int32? = nil,
        errors: Int32? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (source, target) in [(input, STDIN_FILENO), (output, STDOUT_FILENO), (errors, STDERR_FILENO)] {
            if let source {
                posix_spawn_file_actions_adddup2(&actions, source, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        guard let closeFrom = Self.addCloseFrom, let changeDirectory = Self.addChangeDirectory else {
            throw Failure(description: "this C library has no posix_spawn_file_actions_addclosefrom_np or _addchdir_np")
        }
        _ = closeFrom(&actions, 3)
        if let directory { _ = changeDirectory(&actions, directory) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes,
            Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP)
        )

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw Failure(description: "posix_spawn \(executable): \(String(cString: strerror(result)))")
        }
        pid = child
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34) and `_addchdir_np` (2.29), which Swift's Glibc
    /// module does not show.
    private static let addCloseFrom = cFunction(
        "posix_spawn_file_actions_addclosefrom_np",
        as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self
    )
    private static let addChangeDirectory = cFunction(
        "posix_spawn_file_actions_addchdir_np",
        as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32).self
    )

    private static func cFunction<Function>(_ name: String, as type: Function.Type) -> Function? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: type) }
    }

    /// Whether the child has not exited yet (reaping it when it has).
    public var isRunning: Bool { reap(blocking: false) == nil }

    /// Waits for the child to exit; its exit code, or the signal that ended it (as Foundation's `Process` says).
    @discardableResult
    public func waitForExit() -> Int32 {
        reap(blocking: true) ?? -1
    }

    /// The exit code (or the signal) once reaped, nil while the child runs. A blocking wait holds no
    /// lock, so `signal` and `isRunning` answer meanwhile.
    private func reap(blocking: Bool) -> Int32? {
        if let known = status.withLock({ $0 }) { return Self.exitCode(known) }
        var raw: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &raw, blocking ? 0 : WNOHANG) } while result < 0 && errno == EINTR
        return status.withLock { status in
            if result == pid { status = raw }
            return status.map(Self.exitCode)
        }
    }

    /// WIFEXITED / WEXITSTATUS / WTERMSIG, which C defines as macros Swift does not import.
    private static func exitCode(_ raw: Int32) -> Int32 {
        raw & 0x7F == 0 ? (raw >> 8) & 0xFF : raw & 0x7F
    }

    /// Sends `signal` to the child while it has not been reaped (after that its pid may be another's).
    public func signal(_ signal: Int32) {
        status.withLock { status in
            if status == nil { kill(pid, signal) }
        }
    }
}
