import CSystem

#if canImport(Glibc)
import Glibc
#endif

/// The only place that makes socket system calls. Descriptors are plain `Int32`s owned by the caller.
enum Socket {
    /// Binds a non-blocking listening socket to `host:port`; returns it and the port actually bound (port 0 asks
    /// the kernel for a free one). `host` may be an IPv4 or IPv6 literal or a name.
    /// With `reusePort`, several sockets may bind the same address and the kernel spreads new connections over
    /// them evenly (SO_REUSEPORT), which is how each event loop gets its own share.
    static func listen(host: String, port: Int, backlog: Int32, reusePort: Bool = false) throws(SocketError) -> (
        fd: Int32, port: Int
    ) {
        let fd = try bound(host: host, port: port, reusePort: reusePort)
        guard Glibc.listen(fd, backlog) == 0 else {
            let error = SocketError(operation: "listen", errno: errno)
            Glibc.close(fd)
            throw error
        }
        return (fd, localPort(fd))
    }

    /// Fails with `EADDRINUSE` when anything holds `host:port`, even sockets that share it (SO_REUSEPORT): a
    /// socket that does not ask to share cannot bind beside them. Never listens, so no connection is taken.
    static func checkFree(host: String, port: Int) throws(SocketError) {
        Glibc.close(try bound(host: host, port: port, reusePort: false))
    }

    /// A non-blocking socket bound to `host:port` (SO_REUSEADDR, so a previous run's connections in TIME_WAIT do
    /// not hold the port).
    private static func bound(host: String, port: Int, reusePort: Bool) throws(SocketError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            // A name server that did not answer is worth another try; any other failure is the name itself.
            throw SocketError(operation: "getaddrinfo(\(host))", errno: rc == EAI_AGAIN ? EAGAIN : EINVAL)
        }
        defer { freeaddrinfo(list) }
        let info = first.pointee
        let fd = socket(
            info.ai_family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue),
            0
        )
        guard fd >= 0 else { throw SocketError(operation: "socket", errno: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if reusePort { setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size)) }
        guard bind(fd, info.ai_addr, info.ai_addrlen) == 0 else {
            let error = SocketError(operation: "bind(\(host):\(port))", errno: errno)
            Glibc.close(fd)
            throw error
        }
        return fd
    }

    static func localPort(_ fd: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0 else { return 0 }
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { pointer in
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                Int(UInt16(bigEndian: $0.pointee.sin_port))
            }
        }
    }

    /// The peer's numeric address ("127.0.0.1", "::1"), or "" when unknown.
    static func peerAddress(_ fd: Int32) -> String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard rc == 0 else { return "" }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = Int32(storage.ss_family)
        let converted: Bool = withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count)) != nil
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                var raw = address.pointee.sin_addr
                return inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count)) != nil
            }
        }
        guard converted else { return "" }
        let text = buffer.withUnsafeBufferPointer { pointer in pointer.baseAddress.map { String(cString: $0) } ?? "" }
        return PeerAddress.unmapped(text)
    }

    enum Accepted {
        case connection(Int32)
        /// None waiting, or one that failed on its own (reset before it was taken): try again when readable.
        case noneWaiting
        /// The process or the system has no descriptor (or memory) for it: the connection is still waiting.
        case outOfResources(errno: Int32)
    }

    /// A new non-blocking connection, or why none was taken.
    static func accept(_ listener: Int32) -> Accepted {
        let fd = csystem_accept_nonblocking(listener)
        guard fd >= 0 else {
            let error = errno
            return [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error) ? .outOfResources(errno: error) : .noneWaiting
        }
        var one: Int32 = 1
        // Responses are written whole; Nagle would only delay the last segment.
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return .connection(fd)
    }

    enum ReadResult {
        case bytes(Int)
        case wouldBlock
        case closed
    }

    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .closed }
            if errno == EINTR { continue }
            return errno == EAGAIN || errno == EWOULDBLOCK ? .wouldBlock : .closed
        }
    }

    /// Writes what the kernel takes now: the count, 0 when it would block, nil when the peer is gone.
    /// MSG_NOSIGNAL turns a vanished peer into EPIPE instead of a process-killing SIGPIPE.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int? {
        while true {
            let count = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return count }
            if errno == EINTR { continue }
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : nil
        }
    }

    /// Whether the kernel holds bytes for `fd` not read yet (closing then would send a reset, not a FIN).
    static func hasUnreadBytes(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) != 0
    }

    /// Stops a listening socket taking connections (Linux: a listening socket shut down refuses new ones and
    /// resets those queued); the descriptor stays open until `close`.
    static func stopListening(_ fd: Int32) {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    static func shutdownWrite(_ fd: Int32) {
        shutdown(fd, Int32(SHUT_WR))
    }

    static func close(_ fd: Int32) {
        Glibc.close(fd)
    }
}
