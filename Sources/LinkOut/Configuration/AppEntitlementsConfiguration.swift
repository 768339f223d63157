extension Configuration {
    /// `appEntitlements`: apps without a backend redeem their code and check their entitlements themselves, and
    /// verify what linkout signs with the keys at `/.well-known/jwks.json`.
    package struct AppEntitlements: Sendable {
        /// How long a signed entitlement is valid (`exp` − `iat`): what a refund or a revoked credential leaves
        /// an app that does not check again. Default 24 hours; 5 minutes to 30 days.
        package var lifetimeSeconds: Int64 = 86_400
        /// A PKCS#8 PEM file with the P-256 key that signs (`LINKOUT_ENTITLEMENT_KEY_FILE`). Empty (the default):
        /// linkout generates one into the ledger on first start and rotates it with `linkout keys rotate`.
        package var signingKeyFile = ""
        /// How long a subscription stays entitled after its paid period ended without word of a renewal, so a
        /// renewal charged late (a retried card) does not lock the person out meanwhile. Default 1 day; 0 to 7
        /// days.
        package var renewalGraceSeconds: Int64 = 86_400

        package init() {}

        static func read(_ section: JSONFields) throws(ConfigurationError) -> AppEntitlements {
            try section.rejectUnknownKeys(["lifetimeSeconds", "signingKeyFile", "renewalGraceSeconds"])
            var read = AppEntitlements()
            read.lifetimeSeconds = try section.integer(
                "lifetimeSeconds",
                default: read.lifetimeSeconds,
                range: 300...(30 * 86_400)
            )
            read.signingKeyFile = try section.string("signingKeyFile", default: read.signingKeyFile)
            read.renewalGraceSeconds = try section.integer(
                "renewalGraceSeconds",
                default: read.renewalGraceSeconds,
                range: 0...(7 * 86_400)
            )
            return read
        }
    }
}
