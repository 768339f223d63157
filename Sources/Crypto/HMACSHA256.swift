import CCrypto

/// HMAC-SHA256 through OpenSSL libcrypto: unguessable, stable ids (a checkout per token), CSRF tokens, and the
/// signatures of webhooks (Stripe's, and the ones linkout sends).
public struct HMACSHA256: Sendable {
    private let key: [UInt8]
    /// The key set up once (nil if OpenSSL refused, e.g. an empty key: then each message takes the one-shot
    /// path). Every landing visit computes several MACs; set up per message, the MAC fetch and key pads cost
    /// more than the hashing.
    private let keyed: KeyedContext?

    public init(key: [UInt8]) {
        self.key = key
        keyed = KeyedContext(key: key)
    }

    public func authenticate(_ message: String) -> [UInt8] {
        authenticate(bytes: Array(message.utf8))
    }

    /// The MAC of raw bytes: webhook bodies are signed exactly as they arrived, never re-serialized.
    public func authenticate(bytes: [UInt8]) -> [UInt8] {
        if let keyed, let digest = keyed.authenticate(bytes) { return digest }
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

/// An OpenSSL HMAC-SHA256 context holding the key, freed with the last reference.
///
/// `@unchecked Sendable` because the compiler cannot see into the C pointer. It is safe to share: the context is
/// written only in `init`, before any other thread can see it; afterwards it is only passed as the const source
/// of `EVP_MAC_CTX_dup`, which reads it (and bumps atomic reference counts), and each message is computed in
/// the duplicate, which no other thread sees. `deinit` runs once no reference, so no reader, remains.
private final class KeyedContext: @unchecked Sendable {
    private let context: OpaquePointer

    init?(key: [UInt8]) {
        guard !key.isEmpty,
            let context = key.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                guard let base = buffer.baseAddress else { return nil }
                return ccrypto_hmac_sha256_keyed(base, buffer.count)
            })
        else { return nil }
        self.context = context
    }

    deinit { EVP_MAC_CTX_free(context) }

    /// The 32-byte MAC of `bytes`, or nil if OpenSSL failed.
    func authenticate(_ bytes: [UInt8]) -> [UInt8]? {
        var digest = [UInt8](repeating: 0, count: 32)
        let ok = digest.withUnsafeMutableBufferPointer { output in
            bytes.withUnsafeBufferPointer { message in
                guard let out = output.baseAddress else { return Int32(0) }
                return ccrypto_hmac_sha256(context, message.baseAddress, message.count, out)
            }
        }
        return ok == 1 ? digest : nil
    }
}
