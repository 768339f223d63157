#if canImport(Glibc)
import Glibc
#endif

/// The calling thread's claim on the CPU against the process's other threads (Linux keeps a nice value per
/// thread). Lowering it needs no privilege; raising it again does, so it is for a thread that keeps its role.
public enum ThreadPriority {
    /// The calling thread's nice value.
    public static var currentNiceness: Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }

    /// Sets the calling thread's nice value to `niceness` (absolute, so setting it twice changes nothing); false
    /// when the system refused (raising priority needs a privilege).
    @discardableResult
    public static func setCurrentThread(niceness: Int32) -> Bool {
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) == 0
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
