import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What the event loops do when the process is out of file descriptors (`EMFILE`, `ENFILE`). The listening socket
/// stays readable while connections wait in its backlog, so a loop that only gave up on the failed `accept` would
/// be woken again at once and spin on every core, answering no one. Instead the server keeps one descriptor in
/// reserve: a loop out of descriptors gives it up to take a waiting connection, answers it 503 and closes it, then
/// takes the reserve back. Shared by the loops, under a lock that their accepts also take for a while after a
/// shortage (`accept`): with one reserve each and accepts outside the lock, a loop's freed reserve went to the
/// other loop's accept, and the first loop, its reserve lost, left its share of newcomers unanswered. A reserve
/// lost all the same (another thread may take a freed descriptor first) is taken back as soon as a connection
/// closes (`refill`); until then a loop stops watching its listener until its next sweep, so no core spins.
final class DescriptorShortage: Sendable {
    private let reserve: Mutex<Int32>
    /// Read by every connection's close: set only while the reserve is lost.
    private let missing = Atomic<Bool>(false)
    /// When the last warning was logged (0: never), and the connections answered 503 since.
    private let lastWarning = Atomic<UInt64>(0)
    private let shedSinceWarning = Atomic<Int>(0)
    /// When the last shortage was met: accepts take the lock until a second after it.
    private let lastShortage = Atomic<UInt64>(0)
    static let warningInterval: UInt64 = 60_000_000_000
    static let lockedAcceptsAfterShortage: UInt64 = 1_000_000_000

    init() {
        let descriptor = Self.openReserve()
        reserve = Mutex(descriptor)
        missing.store(descriptor < 0, ordering: .relaxed)
    }

    deinit {
        reserve.withLock { if $0 >= 0 { Socket.close($0) } }
    }

    /// A loop's accept: under the reserve's lock for a second after a shortage, so no accept takes the descriptor
    /// the reserve gives up for a moment; without a lock otherwise.
    func accept(_ listener: Int32, now: UInt64) -> Socket.Accepted {
        let last = lastShortage.load(ordering: .relaxed)
        guard last != 0, now &- last < Self.lockedAcceptsAfterShortage else { return Socket.accept(listener) }
        return reserve.withLock { _ in Socket.accept(listener) }
    }

    enum Shed {
        /// A waiting connection was answered 503 and closed.
        case answered
        /// None was waiting (Linux fails `accept` with `EMFILE` before it looks at the backlog).
        case noneWaiting
        /// No reserve to give up, or the accept failed even with it: the caller stops watching the listener for a
        /// while.
        case noReserve
    }

    /// Takes one waiting connection with the reserve's descriptor, answers it `response` and closes it.
    func shed(from listener: Int32, answering response: [UInt8], now: UInt64) -> Shed {
        lastShortage.store(now, ordering: .relaxed)
        return reserve.withLock { (descriptor: inout Int32) -> Shed in
            if descriptor < 0 { descriptor = Self.openReserve() }
            guard descriptor >= 0 else { return .noReserve }
            Socket.close(descriptor)
            defer {
                descriptor = Self.openReserve()
                missing.store(descriptor < 0, ordering: .relaxed)
            }
            switch Socket.accept(listener) {
            case .connection(let fd):
                response.withUnsafeBytes { _ = Socket.write(fd, $0) }
                Socket.close(fd)
                shedSinceWarning.add(1, ordering: .relaxed)
                return .answered
            case .noneWaiting: return .noneWaiting
            case .outOfResources: return .noReserve
            }
        }
    }

    /// After a connection's descriptor is closed: takes the reserve back if it was lost.
    func refill() {
        guard missing.load(ordering: .relaxed) else { return }
        reserve.withLock { descriptor in
            if descriptor < 0 { descriptor = Self.openReserve() }
            missing.store(descriptor < 0, ordering: .relaxed)
        }
    }

    /// The warning due now, if a minute has passed since the last one any loop logged: the connections answered
    /// 503 since then.
    func warningDue(now: UInt64) -> Int? {
        let last = lastWarning.load(ordering: .relaxed)
        // Another loop's `now` may be later than this one's, taken before it: a wrapped difference read as ages
        // ago, and a second warning followed the first at once.
        guard last == 0 || (now > last && now - last >= Self.warningInterval),
            lastWarning.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
        else { return nil }
        return shedSinceWarning.exchange(0, ordering: .relaxed)
    }

    private static func openReserve() -> Int32 { open("/dev/null", O_RDONLY | O_CLOEXEC) }
}
