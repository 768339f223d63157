import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What an event loop does when the process is out of file descriptors (`EMFILE`, `ENFILE`). The listening socket
/// stays readable while connections wait in its backlog, so a loop that only gave up on the failed `accept` would
/// be woken again at once and spin on every core, answering no one. Instead each loop keeps one descriptor in
/// reserve: it gives that up to take the waiting connection, answers it 503 and closes it, then takes the reserve
/// back. When the reserve cannot be taken back (another thread got the descriptor first), the loop stops watching
/// its listener until its next sweep: connections wait in the backlog a moment, no core spins.
///
/// Used only on its loop's thread.
final class DescriptorShortage {
    private var reserve: Int32
    private let context: ServerContext
    private var shedSinceWarning = 0
    static let warningInterval: UInt64 = 60_000_000_000

    init(context: ServerContext) {
        self.context = context
        reserve = Self.openReserve()
    }

    deinit {
        if reserve >= 0 { Glibc.close(reserve) }
    }

    /// Takes one waiting connection with the reserve's descriptor, answers it `response` and closes it. False when
    /// there is no reserve to give up or nothing was waiting: the caller stops watching the listener for a while.
    func shed(from listener: Int32, answering response: [UInt8]) -> Bool {
        guard reserve >= 0 else {
            reserve = Self.openReserve()
            return false
        }
        Glibc.close(reserve)
        reserve = -1
        defer { reserve = Self.openReserve() }
        guard case .connection(let fd) = Socket.accept(listener) else { return false }
        response.withUnsafeBytes { _ = Socket.write(fd, $0) }
        Socket.close(fd)
        shedSinceWarning += 1
        return true
    }

    /// The warning due now, if a minute has passed since the last one any loop logged; it counts the connections
    /// this loop answered 503 since then.
    func warningDue(now: UInt64) -> Int? {
        // Shared by the loops (`ServerContext.lastDescriptorWarning`): one line a minute however many see it.
        let last = context.lastDescriptorWarning.load(ordering: .relaxed)
        guard last == 0 || now &- last >= Self.warningInterval,
            context.lastDescriptorWarning.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
        else { return nil }
        defer { shedSinceWarning = 0 }
        return shedSinceWarning
    }

    private static func openReserve() -> Int32 { open("/dev/null", O_RDONLY | O_CLOEXEC) }
}
