import Domain
import Storage

/// Signs what a purchase entitles the person to now, or says why it entitles them to nothing.
struct EntitlementIssuer: Sendable {
    enum Outcome {
        case entitled(jws: String, claims: SignedEntitlement)
        case notEntitled(reason: String)
    }

    let ledger: Ledger
    let keyring: EntitlementKeyring
    let policy: EntitlementPolicy
    /// `server.publicURL`: the `iss` claim.
    let issuer: String
    let lifetimeSeconds: Int64

    /// The app a purchase belongs to: the `aud` of its entitlements and the app of the credentials that cover it.
    static func audience(of purchase: PurchaseRecord, token: StoredToken?) -> String {
        (purchase.bundleId ?? token?.token.bundleId)?.rawValue ?? ""
    }

    /// `namingAccount`: false for a credential whose account was erased (`linkout erase --account-token`): the
    /// token keeps its account for Apple's reporting, but what the app is handed from then on does not carry it.
    func entitlement(for purchase: PurchaseRecord, at now: Int64, namingAccount: Bool = true) throws -> Outcome {
        let until: Int64?
        switch policy.state(of: purchase, at: now) {
        case .ended(let reason): return .notEntitled(reason: reason)
        case .active(let end): until = end
        }
        let token = try purchase.externalPurchaseId.flatMap { try ledger.tokens.token($0) }
        let issuedAt = now / 1000
        // Never valid past the paid period and its grace: an app that stops checking loses a lapsed
        // subscription on time (`exp` is in whole seconds: the period's end rounded down, never up).
        let expiry = min(issuedAt + lifetimeSeconds, until.map { $0 / 1000 } ?? Int64.max)
        // A period ending within this second: a token expired as it is made would be refused by the app anyway.
        guard expiry > issuedAt else { return .notEntitled(reason: "period_over") }
        let claims = SignedEntitlement(
            iss: issuer,
            aud: Self.audience(of: purchase, token: token),
            sub: purchase.purchaseId,
            iat: issuedAt,
            exp: expiry,
            productId: purchase.productId,
            kind: purchase.kind,
            environment: (token?.token.environment ?? .production).rawValue,
            test: !purchase.live,
            purchaseDate: purchase.createdAt,
            expiresDate: purchase.kind == .subscription ? purchase.periodEnd : nil,
            appAccountToken: namingAccount ? token?.appAccountToken : nil
        )
        let key = try keyring.signingKey()
        guard let signer = key.signer else { throw AppAccessRefusal("the signing key \(key.kid) has no private half") }
        return .entitled(jws: try claims.signed(kid: key.kid, with: signer), claims: claims)
    }
}
