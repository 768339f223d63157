import CSystem

#if canImport(Glibc)
import Glibc
#endif

/// An eventfd another thread writes to wake an event loop out of `Epoll.wait`.
///
/// `Sendable` because it holds nothing but the descriptor; eventfd reads and writes are atomic in the kernel.
final class WakeSignal: Sendable {
    let descriptor: Int32

    init() throws(SocketError) {
        descriptor = csystem_eventfd()
        guard descriptor >= 0 else { throw SocketError(operation: "eventfd", errno: errno) }
    }

    // Closed only when nothing can signal any more: a late `signal` must never write into whatever file reused
    // the number.
    deinit {
        Glibc.close(descriptor)
    }

    /// Makes the descriptor readable until `reset`. Safe from any thread.
    func signal() {
        var one: UInt64 = 1
        _ = Glibc.write(descriptor, &one, 8)
    }

    /// Clears the signal (the descriptor is non-blocking, so this never waits).
    func reset() {
        var counter: UInt64 = 0
        _ = Glibc.read(descriptor, &counter, 8)
    }
}
