/// One accepted socket as its event loop sees it: the descriptor, the protocol state and what epoll watches.
/// Owned and touched only by that loop's thread.
final class Connection {
    let fd: Int32
    /// Distinguishes this connection from a later one that reuses the descriptor number.
    let id: UInt64
    let remoteAddress: String
    var machine: ConnectionStateMachine
    /// The epoll interest currently registered, nil before the first registration.
    var registered: Epoll.Events?
    /// Queued to continue on the next turn (it yielded with requests still buffered).
    var isResumable = false

    init(fd: Int32, id: UInt64, remoteAddress: String, machine: ConnectionStateMachine) {
        self.fd = fd
        self.id = id
        self.remoteAddress = remoteAddress
        self.machine = machine
    }
}
