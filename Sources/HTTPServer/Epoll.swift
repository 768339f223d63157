import CSystem

#if canImport(Glibc)
import Glibc
#endif

/// An epoll set: the only place that makes epoll calls. Descriptors are registered level-triggered, with the
/// descriptor itself as the event's data.
///
/// `Sendable` because it holds nothing but the descriptor, and the kernel serialises epoll calls on it.
final class Epoll: Sendable {
    /// What a descriptor is watched for, or what it is ready for.
    struct Events: OptionSet, Sendable {
        let rawValue: UInt32

        static let readable = Events(rawValue: csystem_epollin)
        static let writable = Events(rawValue: csystem_epollout)
        /// The peer shut down its sending side (EPOLLRDHUP).
        static let peerShutdown = Events(rawValue: csystem_epollrdhup)
        /// Always reported, never asked for: an error on the socket.
        static let error = Events(rawValue: csystem_epollerr)
        /// Always reported, never asked for: both directions are shut down or the connection was reset.
        static let hangUp = Events(rawValue: csystem_epollhup)
    }

    /// The descriptors `wait` found ready, in a buffer reused across calls.
    struct ReadyList {
        static let capacity: Int32 = 256
        fileprivate var descriptors = [Int32](repeating: 0, count: Int(capacity))
        fileprivate var events = [UInt32](repeating: 0, count: Int(capacity))
        private(set) var count = 0

        init() {}

        subscript(index: Int) -> (descriptor: Int32, events: Events) {
            (descriptors[index], Events(rawValue: events[index]))
        }

        fileprivate mutating func setCount(_ count: Int) { self.count = count }
    }

    private let descriptor: Int32

    init() throws(SocketError) {
        descriptor = csystem_epoll_create()
        guard descriptor >= 0 else { throw SocketError(operation: "epoll_create1", errno: errno) }
    }

    deinit {
        Glibc.close(descriptor)
    }

    /// Starts watching `fd`.
    func add(_ fd: Int32, watching events: Events) {
        _ = csystem_epoll_control(descriptor, 1, fd, events.rawValue)
    }

    /// Changes what `fd` is watched for.
    func modify(_ fd: Int32, watching events: Events) {
        _ = csystem_epoll_control(descriptor, 3, fd, events.rawValue)
    }

    /// Stops watching `fd`. (Closing a descriptor also removes it.)
    func remove(_ fd: Int32) {
        _ = csystem_epoll_control(descriptor, 2, fd, 0)
    }

    /// Waits up to `timeoutMilliseconds` (0: just look) for ready descriptors and puts them in `ready`.
    /// Returns false when the set is unusable (an error other than an interrupting signal).
    func wait(into ready: inout ReadyList, timeoutMilliseconds: Int32) -> Bool {
        let count = csystem_epoll_wait(
            descriptor,
            &ready.descriptors,
            &ready.events,
            ReadyList.capacity,
            timeoutMilliseconds
        )
        ready.setCount(max(0, Int(count)))
        return count >= 0 || errno == EINTR
    }
}
