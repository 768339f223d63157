import Crypto
import ExternalPurchase
import Foundation

/// One of linkout's entitlement keys: its id, its public half as a JWK, and the private half when this process
/// can sign with it.
struct EntitlementKey: Sendable {
    let jwk: PublicJWK
    let signer: ES256Key?

    var kid: String { jwk.kid }

    /// The JWK of `key`, its id the RFC 7638 thumbprint: SHA-256 of the required members in lexical order
    /// without whitespace, base64url. The same key always gets the same id, whichever instance loads it.
    static func publicJWK(of key: ES256Key) throws -> PublicJWK {
        let (x, y) = try key.publicCoordinates()
        let encodedX = Base64URL.encode(x)
        let encodedY = Base64URL.encode(y)
        let members = #"{"crv":"P-256","kty":"EC","x":"\#(encodedX)","y":"\#(encodedY)"}"#
        let thumbprint = Base64URL.encode(try SHA256.digest(Array(members.utf8)))
        return PublicJWK(x: encodedX, y: encodedY, kid: thumbprint)
    }

    static func jsonText(_ jwk: PublicJWK) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(jwk), as: UTF8.self)
    }
}
