/// A key that signs (or signed) the entitlements linkout hands to apps, as the ledger keeps it.
public struct SigningKeyRecord: Sendable, Equatable {
    /// The key id in every JWS header and in the JWKS: the RFC 7638 thumbprint of the public key.
    public var kid: String
    /// The public key as a JWK (JSON text), published at `/.well-known/jwks.json` until the key is retired.
    public var publicJWK: String
    /// The PKCS#8 PEM of a key linkout generated; nil for a key read from a file, whose private half stays there.
    public var privateKeyPEM: String?
    public var createdAt: Int64
    /// From when it signs (UNIX ms): a rotated-in key is published before it signs, so clients can fetch it first.
    public var signsFrom: Int64
    /// When it left the JWKS; entitlements it signed no longer verify from then on.
    public var retiredAt: Int64?

    public init(
        kid: String,
        publicJWK: String,
        privateKeyPEM: String?,
        createdAt: Int64,
        signsFrom: Int64,
        retiredAt: Int64? = nil
    ) {
        self.kid = kid
        self.publicJWK = publicJWK
        self.privateKeyPEM = privateKeyPEM
        self.createdAt = createdAt
        self.signsFrom = signsFrom
        self.retiredAt = retiredAt
    }
}
