#if canImport(Glibc)
import Glibc
#endif

/// The name the system shows for a thread of the server (`top -H`, `/proc/<pid>/task/<tid>/comm`).
enum ThreadName {
    /// Names the calling thread: at most 15 bytes, so the common `linkout-` prefix is left out. Written to
    /// `/proc/thread-self/comm` (`pthread_setname_np` is not visible to Swift without `_GNU_SOURCE`); where that
    /// file is missing, the thread keeps the process's name.
    static func setForCurrentThread(_ name: String) {
        let shown = name.hasPrefix("linkout-") ? name.dropFirst("linkout-".count) : Substring(name)
        let bytes = Array(shown.utf8.prefix(15))
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
