import CCrypto

/// HMAC-SHA256 through OpenSSL libcrypto: unguessable, stable ids (a checkout per token), CSRF tokens, and the
/// signatures of webhooks (Stripe's, and the ones linkout sends).
public struct HMACSHA256: Sendable {
    /// The key's pads, hashed once (`ccrypto_hmac_sha256_prepare`): every landing visit computes several MACs
    /// under the same key, and each then costs hashing the message and the inner digest only.
    private let prepared: ccrypto_hmac_sha256_key

    public init(key: [UInt8]) {
        var prepared = ccrypto_hmac_sha256_key()
        key.withUnsafeBufferPointer { buffer in
            ccrypto_hmac_sha256_prepare(buffer.baseAddress, buffer.count, &prepared)
        }
        self.prepared = prepared
    }

    public func authenticate(_ message: String) -> [UInt8] {
        var message = message
        return message.withUTF8 { authenticate($0) }
    }

    /// The MAC of raw bytes: webhook bodies are signed exactly as they arrived, never re-serialized.
    public func authenticate(bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { authenticate($0) }
    }

    private func authenticate(_ message: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { digest, count in
            guard let out = digest.baseAddress else { return }
            withUnsafePointer(to: prepared) { ccrypto_hmac_sha256($0, message.baseAddress, message.count, out) }
            count = 32
        }
    }

    /// Compares in time independent of where the inputs differ, so a guess leaks nothing through timing.
    public static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
