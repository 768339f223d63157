import CCrypto

/// SHA-256 through OpenSSL: a JWK's thumbprint (RFC 7638), the key id of linkout's entitlement keys.
public enum SHA256 {
    public static func digest(_ bytes: [UInt8]) throws(CryptoError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard EVP_Digest(bytes, bytes.count, &output, &length, EVP_sha256(), nil) == 1, length == 32 else {
            throw .openSSL("EVP_Digest")
        }
        return output
    }
}
