import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Writes log lines to a descriptor (standard error) only when its reader has room for them: a reader that stopped
/// reading (a wedged log collector, a pipe nobody drains) must never hold up the thread that logs. An event loop
/// writes every access line, and one `write(2)` blocked on a full pipe stopped the server answering anyone,
/// `/healthz` included, until someone read the pipe. A line with no room is dropped and counted; the next line
/// written is preceded by one that says how many were lost.
public final class LineWriter: Sendable {
    public static let standardError = LineWriter(descriptor: STDERR_FILENO)

    private let descriptor: Int32
    private let dropped = Atomic<Int>(0)

    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The line and its newline in one `write(2)`, so lines of different threads never interleave.
    public func write(_ line: String) {
        guard hasRoom() else {
            dropped.add(1, ordering: .relaxed)
            return
        }
        let lost = dropped.exchange(0, ordering: .relaxed)
        if lost > 0 {
            Logger(label: "linkout", level: .warning, sink: Logger.Sink { self.writeWhole($0) }).warning(
                "log lines dropped: the log's reader had no room for them",
                ["dropped_lines": String(lost)]
            )
        }
        writeWhole(line)
    }

    /// Whether a write would not block now: a pipe with room for at least `PIPE_BUF` bytes (more than a log line
    /// holds), or a file or terminal ready for output. An error on the descriptor (a reader gone) counts as room:
    /// the write then fails at once.
    private func hasRoom() -> Bool {
        var watched = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        return poll(&watched, 1, 0) != 0
    }

    private func writeWhole(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(descriptor, base + offset, raw.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
