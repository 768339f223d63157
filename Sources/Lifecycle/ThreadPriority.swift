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
}
