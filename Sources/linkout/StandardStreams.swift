import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The command's standard output and error, written with `write(2)`. Foundation's `FileHandle.write` stopped the
/// process (a trap, exit 132, a backtrace) when a descriptor was closed, the disk was full, or the reader was gone
/// with SIGPIPE ignored (systemd's default): after the command had done its work, the one-time secret of a
/// reissued credential among it.
enum StandardStreams {
    /// Why a write to standard output failed, the first time one did.
    private static let lostOutput = Mutex<String?>(nil)

    static func writeOutput(_ text: String) {
        guard let failure = write(text, to: STDOUT_FILENO) else { return }
        lostOutput.withLock { $0 = $0 ?? failure }
    }

    /// Nowhere to say it if this fails.
    static func writeError(_ text: String) {
        _ = write(text, to: STDERR_FILENO)
    }

    /// Why the output was not all written, if it was not.
    static var outputFailure: String? { lostOutput.withLock { $0 } }

    /// Writes every byte of `text` to `descriptor`: nil, or why not. A descriptor left non-blocking by whatever
    /// started the command is waited on until it takes more.
    private static func write(_ text: String, to descriptor: Int32) -> String? {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                bytes = bytes.dropFirst(written)
                continue
            }
            guard written < 0 else { return "nothing was written" }
            switch errno {
            case EINTR: continue
            case EAGAIN:
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, -1)
            default: return String(cString: strerror(errno))
            }
        }
        return nil
    }
}
