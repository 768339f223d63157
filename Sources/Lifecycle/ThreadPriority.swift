#if canImport(Glibc)
import Glibc
#endif

/// The calling thread's claim on the CPU against the process's other threads (Linux keeps a nice value per
/// thread). Lowering it needs no privilege; raising it again does, so it is for a thread that keeps its role.
public enum ThreadPriority {
    /// Lowers the calling thread by `steps` nice levels; false when the system refused.
    @discardableResult
    public static func lowerCurrentThread(by steps: Int32) -> Bool {
        errno = 0
        return !(nice(steps) == -1 && errno != 0)
    }

    /// The calling thread's name as the system shows it (`top -H`, `/proc/<pid>/task/<tid>/comm`): at most 15
    /// bytes, so the common `linkout-` prefix is left out.
    /// Written to `/proc/thread-self/comm` (`pthread_setname_np` is not visible to Swift without `_GNU_SOURCE`);
    /// where that file is missing, the thread keeps the process's name.
    static func nameCurrentThread(_ name: String) {
        let shown = name.hasPrefix("linkout-") ? name.dropFirst("linkout-".count) : Substring(name)
        let bytes = Array(shown.utf8.prefix(15))
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
