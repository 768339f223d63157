import Dispatch
import LinkOut
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Blocks until SIGTERM or SIGINT arrives. The default actions are replaced by dispatch sources, so the
/// process can drain connections and exit 0 instead of dying mid-response (also when it is PID 1 in a container).
public enum SignalWaiter {
    /// Returns the name of the signal that arrived.
    public static func waitForTermination() -> String {
        let arrived = DispatchSemaphore(value: 0)
        let queue = DispatchQueue(label: "linkout.signals")
        var sources: [any DispatchSourceSignal] = []
        let received = SignalBox()
        for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                received.set(name)
                arrived.signal()
            }
            source.resume()
            sources.append(source)
        }
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
