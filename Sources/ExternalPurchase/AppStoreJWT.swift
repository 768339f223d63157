public import Crypto
public import Domain
import Foundation

/// The bearer token for Apple's server APIs (App Store Server API "Generating JSON Web Tokens for API requests"):
/// ES256; header `alg`, `kid`, `typ`; claims `iss`, `iat`, `exp` (at most 60 minutes after `iat`),
/// `aud` = `appstoreconnect-v1`, `bid`.
public struct AppStoreJWT: Sendable {
    public struct Credentials: Sendable {
        /// The issuer ID from App Store Connect's Keys page.
        public var issuerId: String
        /// The key ID of the In-App Purchase key.
        public var keyId: String
        public var key: ES256Key

        public init(issuerId: String, keyId: String, key: ES256Key) {
            self.issuerId = issuerId
            self.keyId = keyId
            self.key = key
        }
    }

    struct Header: Codable, Equatable {
        var alg = "ES256"
        var kid: String
        var typ = "JWT"
    }

    struct Claims: Codable, Equatable {
        var iss: String
        var iat: Int64
        var exp: Int64
        var aud = "appstoreconnect-v1"
        var bid: String
    }

    /// Lifetime of each token. Apple rejects tokens whose `exp` is more than 60 minutes after `iat`, and asks
    /// for a new token per request, so a short one suffices.
    public static let lifetimeSeconds: Int64 = 20 * 60

    /// `iat` is set this far before `now`, so a clock a little ahead of Apple's does not issue a token "from the
    /// future". `exp` stays `lifetimeSeconds` after `now`: `exp − iat` is 21 minutes, within Apple's 60 (Apple:
    /// "Generating JSON Web Tokens for API requests").
    public static let clockSkewSeconds: Int64 = 60

    /// A signed token for requests about `bundleId`, made at `now` (UNIX seconds).
    public static func make(credentials: Credentials, bundleId: BundleID, now: Int64) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = try encoder.encode(Header(kid: credentials.keyId))
        let claims = try encoder.encode(
            Claims(
                iss: credentials.issuerId,
                iat: now - clockSkewSeconds,
                exp: now + lifetimeSeconds,
                bid: bundleId.rawValue
            )
        )
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        let signature = try credentials.key.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }
}
