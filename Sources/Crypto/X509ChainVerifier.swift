import CCrypto

/// Verifies leaf → intermediates → one of a fixed set of trusted roots with OpenSSL's `X509_verify_cert`, at a
/// chosen moment rather than "now", and offline: no CRL, no OCSP.
///
/// Only the configured roots are trust anchors. A self-signed certificate that arrives with the chain (Apple's
/// `x5c` carries its root) is never trusted for arriving; callers pass only intermediates, and even a root
/// passed among them stays untrusted unless the same certificate is configured.
///
/// The path must be exactly the one given: leaf, then each intermediate in order, then a trusted root. OpenSSL
/// builds the shortest chain it can, so a leaf signed straight by a root would otherwise pass with the
/// intermediate beside it unused (and that intermediate's marker OID checked by the caller proving nothing).
public struct X509ChainVerifier: Sendable {
    /// Why a chain was refused.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Reason: String, Sendable, Equatable {
            /// Some certificate of the chain was not valid at the verification time (expired or not yet valid).
            case outsideValidity
            /// The chain does not lead to a trusted root, or a signature or constraint in it fails.
            case untrusted
            /// OpenSSL could not be driven (out of memory, unparsable input).
            case internalError
        }

        public var reason: Reason
        /// OpenSSL's `X509_V_ERR_*` code (0 when the failure came before verification).
        public var code: Int32
        /// Position in the chain of the certificate at fault: 0 is the leaf.
        public var depth: Int32
        /// OpenSSL's message for the code.
        public var message: String

        public var description: String { "X509ChainVerifier.Failure(\(reason), depth \(depth)): \(message)" }
    }

    public let trustedRoots: [X509Certificate]

    public init(trustedRoots: [X509Certificate]) {
        self.trustedRoots = trustedRoots
    }

    /// Verifies `leaf`, issued through `intermediates`, as of `atSeconds` (UNIX).
    public func verify(
        leaf: X509Certificate,
        intermediates: [X509Certificate],
        atSeconds: Int64
    ) throws(Failure) {
        guard let store = X509_STORE_new() else { throw Self.internalFailure("X509_STORE_new") }
        defer { X509_STORE_free(store) }
        for root in trustedRoots {
            // The store takes its own reference; ours goes with the handle.
            let handle = try Self.handle(root)
            guard X509_STORE_add_cert(store, handle.pointer) == 1 else {
                throw Self.internalFailure("X509_STORE_add_cert")
            }
        }
        guard let untrusted = ccrypto_x509_stack_new() else { throw Self.internalFailure("sk_X509_new_null") }
        defer { ccrypto_x509_stack_free(untrusted) }
        for intermediate in intermediates {
            // The stack owns what is pushed onto it and frees it with itself.
            guard let parsed = Self.parse(intermediate.der) else { throw Self.internalFailure("d2i_X509") }
            guard ccrypto_x509_stack_push(untrusted, parsed) > 0 else {
                X509_free(parsed)
                throw Self.internalFailure("sk_X509_push")
            }
        }
        let leafHandle = try Self.handle(leaf)
        guard let context = X509_STORE_CTX_new() else { throw Self.internalFailure("X509_STORE_CTX_new") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leafHandle.pointer, untrusted) == 1 else {
            throw Self.internalFailure("X509_STORE_CTX_init")
        }
        // Validity is judged at the given moment (for Apple notifications: the payload's signedDate), which
        // also switches off OpenSSL's use of the wall clock.
        X509_STORE_CTX_set_time(context, 0, time_t(atSeconds))
        let result = X509_verify_cert(context)
        defer { ERR_clear_error() }
        guard result != 1 else {
            try Self.requireExactPath(context, intermediates: untrusted, count: intermediates.count)
            return
        }
        let code = X509_STORE_CTX_get_error(context)
        let message = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "unknown"
        let reason: Failure.Reason =
            switch code {
            case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID: .outsideValidity
            case X509_V_OK: .internalError
            default: .untrusted
            }
        throw Failure(reason: reason, code: code, depth: X509_STORE_CTX_get_error_depth(context), message: message)
    }

    /// The built chain is leaf, the intermediates in the order given, and one root: nothing skipped or added.
    private static func requireExactPath(
        _ context: OpaquePointer,
        intermediates: OpaquePointer,
        count: Int
    ) throws(Failure) {
        guard let chain = X509_STORE_CTX_get0_chain(context) else { throw internalFailure("X509_STORE_CTX_get0_chain") }
        let length = Int(ccrypto_x509_stack_count(chain))
        guard length == count + 2 else {
            throw Failure(
                reason: .untrusted,
                code: 0,
                depth: Int32(min(length, count + 2) - 1),
                message: "the chain skips or adds certificates: \(length) built, \(count + 2) expected"
            )
        }
        for position in 0..<count {
            let built = ccrypto_x509_stack_value(chain, Int32(position + 1))
            let given = ccrypto_x509_stack_value(intermediates, Int32(position))
            guard let built, let given, X509_cmp(built, given) == 0 else {
                throw Failure(
                    reason: .untrusted,
                    code: 0,
                    depth: Int32(position + 1),
                    message: "the chain does not pass through the intermediate given at this position"
                )
            }
        }
    }

    private static func parse(_ der: [UInt8]) -> OpaquePointer? {
        der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
    }

    private static func handle(_ certificate: X509Certificate) throws(Failure) -> X509Handle {
        do {
            return try X509Handle(der: certificate.der)
        } catch {
            throw internalFailure("d2i_X509")
        }
    }

    private static func internalFailure(_ operation: String) -> Failure {
        let error = CryptoError.openSSL(operation)
        return Failure(reason: .internalError, code: 0, depth: -1, message: error.description)
    }
}
