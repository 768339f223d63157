public import Crypto
import Foundation

/// Verifies the `signedPayload` of an App Store Server Notification V2 offline, following Apple's "JWSDecodedHeader"
/// and Apple's own verifier (App Store Server Library, `SignedDataVerifier` and `ChainVerifier`; docs/apple-facts.md,
/// "Verifying a signed notification"):
///
/// 1. JWS compact form, header `alg` exactly `ES256` (never `none`, never an HMAC);
/// 2. `x5c` holds exactly three standard-Base64 DER certificates: leaf, intermediate, root;
/// 3. leaf → intermediate → one of the pinned roots, judged at the payload's `signedDate` (Apple's leaves live
///    about two years; a notification fetched later from the history API is still genuine). The root inside
///    `x5c` is never trusted: only the configured roots are anchors;
/// 4. the intermediate carries Apple's WWDR marker OID, the leaf Apple's receipt-signer OID;
/// 5. the ES256 signature (JOSE r‖s) over `header.payload` verifies with the leaf's key.
///
/// The payload is read before it is trusted for one thing only, `signedDate`, which the chain check needs; the
/// notification is decoded only after every check passed.
public struct SignedPayloadVerifier: Sendable {
    /// Apple WWDR intermediate marker ("Apple Worldwide Developer Relations", Apple: "JWSDecodedHeader").
    public static let intermediateOID = "1.2.840.113635.100.6.2.1"
    /// Apple receipt-signing leaf marker (`RECEIPT_SIGNER_OID` in Apple's App Store Server Library).
    public static let leafOID = "1.2.840.113635.100.6.11.1"
    /// Larger than any notification Apple sends (a few KB with three certificates); bounds the work on junk.
    public static let maximumLength = 64 * 1024

    public let trustedRoots: [X509Certificate]

    /// Trusts exactly the roots in `trustedRootPEMs` (each text may hold several certificates). The default is
    /// Apple Root CA - G3 alone; tests pass roots of their own.
    public init(trustedRootPEMs: [String] = AppleRootCertificates.defaultPEMs) throws(CryptoError) {
        var roots: [X509Certificate] = []
        for pem in trustedRootPEMs { roots += try X509Certificate.all(pem: pem) }
        guard !roots.isEmpty else {
            throw CryptoError(operation: "SignedPayloadVerifier", detail: "no trusted root configured")
        }
        trustedRoots = roots
    }

    public init(trustedRoots: [X509Certificate]) {
        self.trustedRoots = trustedRoots
    }

    /// The notification, once the signed payload passed every check; otherwise the first check that failed.
    public func verify(_ signedPayload: String) throws(SignedPayloadError) -> NotificationPayload {
        let payload = try verifiedPayloadBytes(signedPayload)
        do {
            return try JSONDecoder().decode(NotificationPayload.self, from: Data(payload))
        } catch {
            throw SignedPayloadError(.malformedPayload, "not a notification payload: \(Self.describe(error))")
        }
    }

    /// The payload's JSON bytes after every check passed (for payloads other than notifications, which carry a
    /// `signedDate` too, such as signed transactions).
    public func verifiedPayloadBytes(_ signedPayload: String) throws(SignedPayloadError) -> [UInt8] {
        let jws = try CompactJWS(signedPayload)
        let header = try JWSHeader(jws.header)
        guard header.alg == "ES256" else {
            throw SignedPayloadError(
                .unsupportedAlgorithm,
                // At most a few characters of what an unauthenticated sender put there reach the log.
                "alg is \(header.alg.map { "\"\($0.prefix(16))\"" } ?? "missing")"
            )
        }
        if let problem = header.x5cProblem { throw problem }
        guard let x5c = header.x5c, x5c.count == 3 else {
            throw SignedPayloadError(
                .wrongCertificateCount,
                "x5c holds \(header.x5c?.count ?? 0) certificates, Apple sends 3"
            )
        }
        let certificates = try x5c.enumerated().map { index, text throws(SignedPayloadError) in
            try Self.certificate(text, position: index)
        }
        let leaf = certificates[0]
        let intermediate = certificates[1]
        let signedDate = try Self.signedDate(jws.payload)

        // certificates[2], the root Apple sends along, is deliberately not passed: trust comes from the
        // configured roots alone.
        do {
            try X509ChainVerifier(trustedRoots: trustedRoots).verify(
                leaf: leaf,
                intermediates: [intermediate],
                atSeconds: signedDate / 1000
            )
        } catch {
            switch error.reason {
            case .outsideValidity:
                throw SignedPayloadError(
                    .expiredAtSignedDate,
                    "certificate \(error.depth) not valid at signedDate \(signedDate): \(error.message)"
                )
            case .untrusted, .internalError:
                throw SignedPayloadError(.untrustedChain, "certificate \(error.depth): \(error.message)")
            }
        }
        guard intermediate.hasExtension(oid: Self.intermediateOID) else {
            throw SignedPayloadError(.missingAppleOID, "the intermediate lacks \(Self.intermediateOID)")
        }
        guard leaf.hasExtension(oid: Self.leafOID) else {
            throw SignedPayloadError(.missingAppleOID, "the leaf lacks \(Self.leafOID)")
        }

        let key: ES256Key
        do {
            key = try leaf.publicKey()
        } catch {
            throw SignedPayloadError(.badCertificate, "the leaf's key is not EC P-256")
        }
        guard key.verify(jws.signature, message: jws.signingInput) else {
            throw SignedPayloadError(.badSignature, "the ES256 signature does not match header.payload")
        }
        return jws.payload
    }

    /// x5c entries are standard Base64 of DER (RFC 7515 §4.1.6; Apple's library decodes them with
    /// `Data(base64Encoded:)`), not Base64URL.
    private static func certificate(_ text: String, position: Int) throws(SignedPayloadError) -> X509Certificate {
        guard let der = Data(base64Encoded: text), !der.isEmpty else {
            throw SignedPayloadError(.badCertificate, "x5c[\(position)] is not standard Base64")
        }
        do {
            return try X509Certificate(der: Array(der))
        } catch {
            throw SignedPayloadError(.badCertificate, "x5c[\(position)] is not a DER certificate")
        }
    }

    /// `signedDate` (UNIX ms), read from a payload that is not trusted yet: the chain must be judged at it.
    private static func signedDate(_ payload: [UInt8]) throws(SignedPayloadError) -> Int64 {
        struct Dated: Decodable { var signedDate: Int64 }
        let signedDate: Int64
        do {
            signedDate = try JSONDecoder().decode(Dated.self, from: Data(payload)).signedDate
        } catch {
            throw SignedPayloadError(.malformedPayload, "no integer signedDate: \(describe(error))")
        }
        // Read before the chain is checked, so from anyone: a date before 1970 is no signing date (and
        // Int64.min, rounded down to seconds by negation, once stopped the server).
        guard signedDate >= 0 else { throw SignedPayloadError(.malformedPayload, "signedDate is before 1970") }
        return signedDate
    }

    /// A decoding error named by its field, without echoing payload content.
    private static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, _): "missing \(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            context.codingPath.isEmpty
                ? "not JSON" : "bad \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: "not JSON"
        }
    }
}

/// Why a signed payload was refused. `code` is stable (logs, metrics labels, stored rejections); `detail` is for
/// people and never repeats payload content.
public struct SignedPayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable, Equatable, CaseIterable {
        /// Not three Base64URL parts, a header that is not a JSON object, or too long.
        case malformedJWS
        /// `alg` other than `ES256` (`none`, `HS256`, `RS256`, …) or missing.
        case unsupportedAlgorithm
        /// `x5c` missing or not exactly leaf, intermediate, root.
        case wrongCertificateCount
        /// An `x5c` entry that is not Base64 DER, or a leaf whose key is not P-256.
        case badCertificate
        /// The chain does not lead to a pinned root (including a chain that brings its own root).
        case untrustedChain
        /// The intermediate or the leaf lacks Apple's marker OID.
        case missingAppleOID
        /// A certificate of the chain was not valid at the payload's `signedDate`.
        case expiredAtSignedDate
        /// The signature does not verify with the leaf's key.
        case badSignature
        /// The payload is not JSON, has no `signedDate`, or is not a notification.
        case malformedPayload
    }

    public var reason: Reason
    public var detail: String

    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    public var code: String { reason.rawValue }

    public var description: String { "SignedPayloadError(\(code)): \(detail)" }
}

/// The three parts of a JWS in compact serialization (RFC 7515 §7.1), decoded.
private struct CompactJWS {
    var header: [UInt8]
    var payload: [UInt8]
    var signature: [UInt8]
    /// `header.payload` exactly as received: what the signature covers.
    var signingInput: [UInt8]

    init(_ text: String) throws(SignedPayloadError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= SignedPayloadVerifier.maximumLength else {
            throw SignedPayloadError(.malformedJWS, "longer than \(SignedPayloadVerifier.maximumLength) bytes")
        }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        // An empty signature is let through to be refused by the algorithm check: that is how `alg: none`
        // tokens look, and they deserve their own name.
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw SignedPayloadError(.malformedJWS, "not three parts separated by dots")
        }
        guard let header = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw SignedPayloadError(.malformedJWS, "a part is not Base64URL") }
        self.header = header
        self.payload = payload
        self.signature = signature
        signingInput = Array(bytes[..<parts[1].endIndex])
    }
}

/// The protected header fields that matter here; others are ignored, unless `crit` says they may not be.
private struct JWSHeader {
    var alg: String?
    var x5c: [String]?
    var x5cProblem: SignedPayloadError?

    init(_ bytes: [UInt8]) throws(SignedPayloadError) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw SignedPayloadError(.malformedJWS, "the header is not a JSON object")
        }
        // `crit` lists extensions the receiver must understand or refuse the JWS (RFC 7515 §4.1.11); this
        // verifier understands none, and Apple sends none.
        guard object["crit"] == nil else {
            throw SignedPayloadError(.malformedJWS, "the header lists crit extensions, which are not understood")
        }
        alg = object["alg"] as? String
        // x5c is judged after alg, so a payload with a foreign algorithm is named for that first.
        switch object["x5c"] {
        case nil: x5c = nil
        case let list as [String]: x5c = list
        default: x5cProblem = SignedPayloadError(.wrongCertificateCount, "x5c is not a list of strings")
        }
    }
}
