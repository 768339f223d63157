import Dispatch
import LinkOut
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Waits for SIGTERM, SIGINT or SIGHUP (a closed terminal, a supervisor's reload: linkout reads its configuration
/// only at start, so a hangup stops it as SIGTERM does, drained, rather than by the default action's sudden
/// death). The default actions are replaced by dispatch sources, so the process can drain
/// connections and exit 0 instead of dying mid-response (also when it is PID 1 in a container). Installed before
/// the server announces its port: a signal sent the moment a supervisor or a test reads that line arrives at a
/// listening source. Installed after the announcement (as before), a signal could fall between the default action
/// being set aside and the source starting, and be lost: the process then never stopped (seen once in CI).
final class SignalWaiter {
    private let arrived = DispatchSemaphore(value: 0)
    private let received = SignalBox()
    /// The sources live as long as the waiter; cancelled when it is done.
    private var sources: [any DispatchSourceSignal] = []

    /// Starts listening for SIGTERM, SIGINT and SIGHUP at once.
    init() {
        let queue = DispatchQueue(label: "linkout.signals")
        for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT"), (SIGHUP, "SIGHUP")] {
            // Dispatch's signal sources want the default action (termination) set aside first.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [received, arrived] in
                received.set(name)
                arrived.signal()
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Blocks until a signal arrived (or had arrived) and returns its name.
    func wait() -> String {
        arrived.wait()
        for source in sources { source.cancel() }
        return received.get()
    }
}

private final class SignalBox: Sendable {
    private let name = Mutex("")
    func set(_ value: String) { name.withLock { if $0.isEmpty { $0 = value } } }
    func get() -> String { name.withLock { $0 } }
}
