import CCrypto

/// A failure inside OpenSSL, with its error queue as text. Never contains key material.
public struct CryptoError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var detail: String

    public init(operation: String, detail: String) {
        self.operation = operation
        self.detail = detail
    }

    public var description: String { "CryptoError(\(operation)): \(detail)" }

    /// Captures (and clears) OpenSSL's thread-local error queue.
    static func openSSL(_ operation: String) -> CryptoError {
        var messages: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(
                buffer.withUnsafeBufferPointer { pointer in pointer.baseAddress.map { String(cString: $0) } ?? "" }
            )
        }
        return CryptoError(
            operation: operation,
            detail: messages.isEmpty ? "unknown" : messages.joined(separator: "; ")
        )
    }
}
