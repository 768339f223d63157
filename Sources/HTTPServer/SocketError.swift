#if canImport(Glibc)
import Glibc
#endif

/// A failed socket call, with the call's name and errno.
public struct SocketError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32

    public var description: String {
        let message = strerror(errno).map { String(cString: $0) } ?? "unknown"
        return "\(operation) failed: \(message) (errno \(errno))"
    }
}
