import Crypto
import Domain
import ExternalPurchase
import Foundation

/// What linkout signs for an app: one purchase that entitles the person now, as a compact JWS (RFC 7515) with
/// ES256 (RFC 7518 §3.4), verifiable offline with the keys at `/.well-known/jwks.json`. Registered claims are
/// in seconds (RFC 7519); linkout's own dates are UNIX milliseconds, as Apple's are.
struct SignedEntitlement: Codable, Sendable, Equatable {
    struct Header: Codable, Equatable {
        var alg = "ES256"
        var kid: String
        var typ = "JWT"
    }

    /// `server.publicURL`.
    var iss: String
    /// The app's bundle ID: a JWS for one app is refused by another that checks its audience.
    var aud: String
    /// The purchase id.
    var sub: String
    var iat: Int64
    /// `iat` + `appEntitlements.lifetimeSeconds`, never later than a subscription's paid period and its grace.
    var exp: Int64
    var productId: ProductID?
    /// `oneTime` or `subscription`.
    var kind: PurchaseKind
    /// `production` or `sandbox`: the environment of the App Store token the purchase was made on.
    var environment: String
    /// No money changed hands (the demo provider, a provider's test mode).
    var test: Bool
    var purchaseDate: Int64
    /// End of the paid period of a subscription.
    var expiresDate: Int64?
    /// The app's account for the person, from the token the purchase was made on.
    var appAccountToken: String?

    /// The compact serialization: header and claims base64url-encoded, signed with `key` under `kid`.
    func signed(kid: String, with key: ES256Key) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let signingInput =
            Base64URL.encode(try encoder.encode(Header(kid: kid))) + "." + Base64URL.encode(try encoder.encode(self))
        return signingInput + "." + Base64URL.encode(try key.sign(Array(signingInput.utf8)))
    }
}
