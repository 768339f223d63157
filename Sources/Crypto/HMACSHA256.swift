import CCrypto

/// HMAC-SHA256 through OpenSSL libcrypto: unguessable, stable ids (a checkout per token), CSRF tokens, and the
/// signatures of webhooks (Stripe's, and the ones linkout sends).
public struct HMACSHA256: Sendable {
    private let key: [UInt8]

    public init(key: [UInt8]) {
        self.key = key
    }

    public func authenticate(_ message: String) -> [UInt8] {
        authenticate(bytes: Array(message.utf8))
    }

    /// The MAC of raw bytes: webhook bodies are signed exactly as they arrived, never re-serialized.
    public func authenticate(bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = key.withUnsafeBytes { keyBuffer in
            bytes.withUnsafeBufferPointer { messageBuffer in
                CCrypto.HMAC(
                    EVP_sha256(),
                    keyBuffer.baseAddress,
                    Int32(keyBuffer.count),
                    messageBuffer.baseAddress,
                    messageBuffer.count,
                    &digest,
                    &length
                )
            }
        }
        return Array(digest.prefix(Int(length)))
    }

    /// Compares in time independent of where the inputs differ, so a guess leaks nothing through timing.
    public static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
