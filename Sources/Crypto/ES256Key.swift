import CCrypto
import Synchronization

/// An ECDSA P-256 key from a PKCS#8 PEM: the App Store Connect In-App Purchase key (`.p8`). Signs ES256 JWTs.
/// Holding only a public key (tests verifying JWTs) works too: `sign` then fails.
public final class ES256Key: Sendable {
    private let key: Mutex<KeyPointer>

    /// Loads a private key (`-----BEGIN PRIVATE KEY-----`) or a public key (`-----BEGIN PUBLIC KEY-----`).
    public init(pem: String) throws(CryptoError) {
        let bytes = Array(pem.utf8)
        let isPublic = pem.contains("BEGIN PUBLIC KEY")
        let loaded: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return isPublic ? PEM_read_bio_PUBKEY(bio, nil, nil, nil) : PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let loaded else { throw .openSSL(isPublic ? "PEM_read_bio_PUBKEY" : "PEM_read_bio_PrivateKey") }
        guard EVP_PKEY_get_base_id(loaded) == EVP_PKEY_EC, EVP_PKEY_get_bits(loaded) == 256 else {
            EVP_PKEY_free(loaded)
            throw CryptoError(operation: "load", detail: "the key is not an EC P-256 key (ES256 needs one)")
        }
        key = Mutex(KeyPointer(loaded))
    }

    /// Generates a fresh P-256 key pair (tests).
    public static func generate() throws(CryptoError) -> ES256Key {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { throw .openSSL("EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(context) }
        var generated: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
            EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1,
            EVP_PKEY_keygen(context, &generated) == 1, let generated
        else { throw .openSSL("EVP_PKEY_keygen") }
        defer { EVP_PKEY_free(generated) }
        return try ES256Key(pem: try pem(generated, privatePart: true))
    }

    /// The PKCS#8 PEM of the private key (tests write it to a `.p8` file).
    public func privateKeyPEM() throws(CryptoError) -> String {
        try key.withLock { box throws(CryptoError) in try Self.pem(box.pointer, privatePart: true) }
    }

    /// The SubjectPublicKeyInfo PEM of the public half.
    public func publicKeyPEM() throws(CryptoError) -> String {
        try key.withLock { box throws(CryptoError) in try Self.pem(box.pointer, privatePart: false) }
    }

    private static func pem(_ pointer: OpaquePointer, privatePart: Bool) throws(CryptoError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL("BIO_new") }
        defer { BIO_free(bio) }
        let written =
            privatePart
            ? PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil) : PEM_write_bio_PUBKEY(bio, pointer)
        guard written == 1 else { throw .openSSL("PEM_write_bio") }
        var data: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &data)
        guard length > 0, let data else { throw .openSSL("BIO_get_mem_data") }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// The public point's affine coordinates, 32 bytes each: a JWK's `x` and `y` (RFC 7518 §6.2.1).
    public func publicCoordinates() throws(CryptoError) -> (x: [UInt8], y: [UInt8]) {
        let point = try key.withLock { box throws(CryptoError) -> [UInt8] in
            var encoded = [UInt8](repeating: 0, count: 65)
            var length = 0
            guard
                EVP_PKEY_get_octet_string_param(box.pointer, OSSL_PKEY_PARAM_PUB_KEY, &encoded, 65, &length) == 1
            else { throw .openSSL("EVP_PKEY_get_octet_string_param") }
            return Array(encoded.prefix(length))
        }
        // SEC 1 uncompressed form: 0x04, then X and Y.
        guard point.count == 65, point[0] == 4 else {
            throw CryptoError(operation: "publicCoordinates", detail: "the public point is not uncompressed P-256")
        }
        return (Array(point[1...32]), Array(point[33...64]))
    }

    /// The 64-byte JOSE signature r‖s (RFC 7518 §3.4) of SHA-256(message), not OpenSSL's DER form.
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        let der = try key.withLock { box throws(CryptoError) -> [UInt8] in
            guard let context = EVP_MD_CTX_new() else { throw .openSSL("EVP_MD_CTX_new") }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, box.pointer) == 1 else {
                throw .openSSL("EVP_DigestSignInit")
            }
            var length = 0
            guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else {
                throw .openSSL("EVP_DigestSign")
            }
            var signature = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
                throw .openSSL("EVP_DigestSign")
            }
            return Array(signature.prefix(length))
        }
        return try Self.derToRaw(der)
    }

    /// Checks a raw r‖s signature of SHA-256(message) with this key's public half.
    public func verify(_ signature: [UInt8], message: [UInt8]) -> Bool {
        guard signature.count == 64, let der = try? Self.rawToDER(signature) else { return false }
        return key.withLock { box in
            guard let context = EVP_MD_CTX_new() else { return false }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, box.pointer) == 1 else { return false }
            let result = EVP_DigestVerify(context, der, der.count, message, message.count)
            ERR_clear_error()
            return result == 1
        }
    }

    /// DER `SEQUENCE { INTEGER r, INTEGER s }` → r‖s, each left-padded to 32 bytes.
    static func derToRaw(_ der: [UInt8]) throws(CryptoError) -> [UInt8] {
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature else { throw .openSSL("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(signature) }
        var raw = [UInt8](repeating: 0, count: 64)
        let ok = raw.withUnsafeMutableBufferPointer { out in
            guard let base = out.baseAddress else { return false }
            return BN_bn2binpad(ECDSA_SIG_get0_r(signature), base, 32) == 32
                && BN_bn2binpad(ECDSA_SIG_get0_s(signature), base + 32, 32) == 32
        }
        guard ok else { throw .openSSL("BN_bn2binpad") }
        return raw
    }

    /// r‖s → DER, for EVP_DigestVerify.
    static func rawToDER(_ raw: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard raw.count == 64, let signature = ECDSA_SIG_new() else { throw .openSSL("ECDSA_SIG_new") }
        defer { ECDSA_SIG_free(signature) }
        let r = BN_bin2bn(raw, 32, nil)
        let s = Array(raw[32...]).withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        guard ECDSA_SIG_set0(signature, r, s) == 1 else { throw .openSSL("ECDSA_SIG_set0") }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(signature, &out)
        guard length > 0, let out else { throw .openSSL("i2d_ECDSA_SIG") }
        defer { ccrypto_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }
}

/// The EVP_PKEY pointer, owned by the key's Mutex and freed with it.
struct KeyPointer: ~Copyable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }
}
