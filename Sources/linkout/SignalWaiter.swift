import CSystem

#if canImport(Glibc)
import Glibc
#endif

/// Waits for SIGTERM, SIGINT or SIGHUP (a closed terminal, a supervisor's reload: linkout reads its configuration
/// only at start, so a hangup stops it as SIGTERM does, drained, rather than by the default action's sudden
/// death; unless the process was started with it ignored, as `nohup` does). The default actions are replaced so
/// the process can drain connections and exit 0 instead of dying mid-response (also when it is PID 1 in a
/// container).
///
/// Installed before the server announces its port, and in place when `init` returns: a handler writes each
/// signal to a pipe this waiter reads (`csystem_signal_pipe`). Dispatch signal sources, used before, register on
/// a thread of their own some time after they are made, and a signal sent the moment a supervisor or a test read
/// the port met the ignored disposition set before them and was lost: the process then never stopped (seen in a
/// loaded test run).
final class SignalWaiter {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private static let names = [SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGHUP: "SIGHUP"]
    private let readEnd: Int32

    init() throws {
        // Started with SIGHUP ignored (`nohup linkout serve &`): the hangup is left ignored, as nohup asked.
        let numbers = Self.names.keys.filter { $0 != SIGHUP || csystem_signal_ignored(SIGHUP) == 0 }
        let readEnd = numbers.withUnsafeBufferPointer { numbers in
            numbers.baseAddress.map { csystem_signal_pipe($0, Int32(numbers.count)) } ?? -1
        }
        guard readEnd >= 0 else {
            throw Failure(description: "cannot set up signal handling: \(String(cString: strerror(errno)))")
        }
        self.readEnd = readEnd
    }

    /// Blocks until a signal arrived (or had arrived) and returns its name.
    func wait() -> String {
        var number: UInt8 = 0
        while true {
            let count = read(readEnd, &number, 1)
            if count == 1 { return Self.names[Int32(number)] ?? "signal \(number)" }
            // Interrupted (a handler ran on this thread): read again. The pipe's write end never closes.
            if count < 0 && errno == EINTR { continue }
            return "signal pipe closed"
        }
    }
}
