import CCrypto

/// One X.509 certificate, parsed once from DER and kept as plain values: no OpenSSL object outlives a call, so
/// the value is freely `Sendable` and comparable. `X509ChainVerifier` re-parses the DER it holds when it needs
/// OpenSSL's view again.
public struct X509Certificate: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The certificate exactly as it was given.
    public let der: [UInt8]
    /// The subject in RFC 2253 form (`CN=…,O=…`), for messages.
    public let subject: String
    /// The issuer in RFC 2253 form, for messages.
    public let issuer: String
    /// Start of validity, UNIX seconds.
    public let notBefore: Int64
    /// End of validity, UNIX seconds.
    public let notAfter: Int64
    /// The dotted OIDs of every extension the certificate carries (Apple marks its certificate roles this way).
    public let extensionOIDs: Set<String>
    /// The SubjectPublicKeyInfo as PEM.
    public let publicKeyPEM: String

    /// Parses DER. Trailing bytes after the certificate are refused: a certificate is exactly one structure.
    public init(der: [UInt8]) throws(CryptoError) {
        let handle = try X509Handle(der: der)
        self.der = der
        subject = try Self.name(X509_get_subject_name(handle.pointer))
        issuer = try Self.name(X509_get_issuer_name(handle.pointer))
        notBefore = try Self.seconds(X509_get0_notBefore(handle.pointer))
        notAfter = try Self.seconds(X509_get0_notAfter(handle.pointer))
        extensionOIDs = try Self.extensionOIDs(handle.pointer)
        publicKeyPEM = try Self.publicKeyPEM(handle.pointer)
    }

    /// Parses the first certificate of a PEM text (`-----BEGIN CERTIFICATE-----`).
    public init(pem: String) throws(CryptoError) {
        guard let first = try Self.all(pem: pem).first else {
            throw CryptoError(operation: "PEM_read_bio_X509", detail: "no certificate in the PEM text")
        }
        self = first
    }

    /// Every certificate in a PEM text, in order (a bundle of roots).
    public static func all(pem: String) throws(CryptoError) -> [X509Certificate] {
        let bytes = Array(pem.utf8)
        var ders: [[UInt8]] = []
        // Stale errors of earlier calls on this thread would read as a failure here.
        ERR_clear_error()
        let ok: Bool = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return false }
            defer { BIO_free(bio) }
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                defer { X509_free(certificate) }
                guard let der = X509Handle.encode(certificate) else { return false }
                ders.append(der)
            }
            // The loop ends on "no start line" at the end of the text; anything else is a broken block.
            let last = ERR_peek_last_error()
            if ERR_GET_REASON(last) == PEM_R_NO_START_LINE, !ders.isEmpty { ERR_clear_error() }
            return ERR_peek_error() == 0
        }
        guard ok else { throw .openSSL("PEM_read_bio_X509") }
        var certificates: [X509Certificate] = []
        for der in ders { certificates.append(try X509Certificate(der: der)) }
        return certificates
    }

    /// The certificate as PEM text.
    public var pem: String {
        var lines = ["-----BEGIN CERTIFICATE-----"]
        let encoded = Self.base64(der)
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let end = encoded.index(index, offsetBy: 64, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(String(encoded[index..<end]))
            index = end
        }
        lines.append("-----END CERTIFICATE-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Whether the certificate carries an extension with this dotted OID (critical or not).
    public func hasExtension(oid: String) -> Bool {
        extensionOIDs.contains(oid)
    }

    /// Whether `seconds` (UNIX) lies within `notBefore...notAfter`.
    public func isValid(atSeconds seconds: Int64) -> Bool {
        notBefore <= seconds && seconds <= notAfter
    }

    /// The public key for ES256 verification; fails unless it is an EC P-256 key.
    public func publicKey() throws(CryptoError) -> ES256Key {
        try ES256Key(pem: publicKeyPEM)
    }

    /// SHA-256 of the DER: the fingerprint people compare against Apple's published one.
    public var sha256Fingerprint: [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = der.withUnsafeBytes { raw in
            EVP_Digest(raw.baseAddress, raw.count, &digest, &length, EVP_sha256(), nil) == 1
        }
        return ok ? Array(digest.prefix(Int(length))) : []
    }

    /// The fingerprint as upper-case hex pairs joined by `:`, the way certificate viewers print it.
    public var sha256FingerprintText: String {
        Hex.encode(sha256Fingerprint, uppercase: true, separator: ":")
    }

    public var description: String { "X509Certificate(\(subject), issued by \(issuer))" }

    public static func == (lhs: X509Certificate, rhs: X509Certificate) -> Bool { lhs.der == rhs.der }

    public func hash(into hasher: inout Hasher) { hasher.combine(der) }

    private static func name(_ name: OpaquePointer?) throws(CryptoError) -> String {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { throw .openSSL("X509_NAME") }
        defer { BIO_free(bio) }
        guard X509_NAME_print_ex(bio, name, 0, ccrypto_name_flags_rfc2253()) >= 0 else {
            throw .openSSL("X509_NAME_print_ex")
        }
        return X509Handle.text(of: bio)
    }

    /// ASN.1 time → UNIX seconds, as the difference from the epoch (no libc time zone involved).
    private static func seconds(_ time: UnsafePointer<ASN1_TIME>?) throws(CryptoError) -> Int64 {
        guard let time, let epoch = ASN1_TIME_set(nil, 0) else { throw .openSSL("ASN1_TIME") }
        defer { ASN1_TIME_free(epoch) }
        var days: Int32 = 0
        var seconds: Int32 = 0
        guard ASN1_TIME_diff(&days, &seconds, epoch, time) == 1 else { throw .openSSL("ASN1_TIME_diff") }
        return Int64(days) * 86_400 + Int64(seconds)
    }

    private static func extensionOIDs(_ certificate: OpaquePointer) throws(CryptoError) -> Set<String> {
        var oids: Set<String> = []
        for index in 0..<max(0, X509_get_ext_count(certificate)) {
            guard let object = X509_EXTENSION_get_object(X509_get_ext(certificate, index)) else {
                throw .openSSL("X509_EXTENSION_get_object")
            }
            oids.insert(try X509Handle.dotted(object))
        }
        return oids
    }

    private static func publicKeyPEM(_ certificate: OpaquePointer) throws(CryptoError) -> String {
        guard let key = X509_get0_pubkey(certificate), let bio = BIO_new(BIO_s_mem()) else {
            throw .openSSL("X509_get0_pubkey")
        }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PUBKEY(bio, key) == 1 else { throw .openSSL("PEM_write_bio_PUBKEY") }
        return X509Handle.text(of: bio)
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Standard Base64 with padding (PEM bodies).
    private static func base64(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value: UInt32 = 0
            for (offset, byte) in chunk.enumerated() { value |= UInt32(byte) << UInt32(16 - 8 * offset) }
            for position in 0..<4 {
                if position <= chunk.count {
                    output.append(alphabet[Int(value >> UInt32(18 - 6 * position) & 0x3F)])
                } else {
                    output.append(UInt8(ascii: "="))
                }
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}

/// An OpenSSL `X509` owned for the length of one operation and freed with its owner.
struct X509Handle: ~Copyable {
    let pointer: OpaquePointer

    init(der: [UInt8]) throws(CryptoError) {
        var consumed = 0
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            let certificate = d2i_X509(nil, &cursor, buffer.count)
            consumed = cursor.map { $0 - base } ?? 0
            return certificate
        }
        guard let parsed else { throw .openSSL("d2i_X509") }
        guard consumed == der.count else {
            X509_free(parsed)
            throw CryptoError(operation: "d2i_X509", detail: "\(der.count - consumed) bytes after the certificate")
        }
        pointer = parsed
    }

    /// Takes ownership of a certificate OpenSSL just made.
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { X509_free(pointer) }

    /// The DER of an OpenSSL certificate.
    static func encode(_ certificate: OpaquePointer) -> [UInt8]? {
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(certificate, &out)
        guard length > 0, let out else { return nil }
        defer { ccrypto_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// Whatever was written into a memory BIO, as UTF-8 text.
    static func text(of bio: OpaquePointer) -> String {
        var data: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &data)
        guard length > 0, let data else { return "" }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// An ASN.1 object identifier in dotted form (`1.2.840.113635.100.6.11.1`), never a short name.
    static func dotted(_ object: OpaquePointer) throws(CryptoError) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        guard length > 0, Int(length) < buffer.count else { throw .openSSL("OBJ_obj2txt") }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
