#if canImport(Glibc)
import Glibc
#endif

/// A failed socket call, with the call's name and errno.
public struct SocketError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32

    /// The host names no address of this machine: it resolves to none, or to one no interface has. A mistake in
    /// the configuration, unlike a name server that did not answer.
    public var isAddressNotHere: Bool {
        (operation.hasPrefix("getaddrinfo") && errno == EINVAL)
            || (operation.hasPrefix("bind") && errno == EADDRNOTAVAIL)
    }

    public var description: String {
        let message = strerror(errno).map { String(cString: $0) } ?? "unknown"
        return "\(operation) failed: \(message) (errno \(errno))"
    }
}
