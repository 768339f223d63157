/// A P-256 public key as a JSON Web Key (RFC 7517, RFC 7518 §6.2), the way `/.well-known/jwks.json` lists it.
struct PublicJWK: Codable, Sendable, Equatable {
    var kty = "EC"
    var crv = "P-256"
    var x: String
    var y: String
    var kid: String
    var use = "sig"
    var alg = "ES256"
}
