import Domain
package import Lifecycle
package import Storage

/// The operator's side of apps without a backend, shared by the CLI (`linkout credentials …`, `linkout keys …`)
/// and the admin API: revoke or reissue a customer's credential, rotate and retire the signing keys.
package struct AppAccessAdministration: Sendable {
    let ledger: Ledger
    let identifiers: Identifiers
    let keyring: EntitlementKeyring
    let clock: Clock

    init(ledger: Ledger, identifiers: Identifiers, keyring: EntitlementKeyring, clock: Clock) {
        self.ledger = ledger
        self.identifiers = identifiers
        self.keyring = keyring
        self.clock = clock
    }

    /// For the CLI: over an opened ledger, with the configured keys.
    package init(configuration: Configuration, ledger: Ledger, clock: Clock = .system) throws {
        self.init(
            ledger: ledger,
            identifiers: Identifiers(secret: try ledger.settings.secret(named: "identifiers")),
            keyring: try EntitlementKeyring(
                ledger: ledger,
                configuration: configuration.appEntitlements,
                clock: clock,
                role: .administration
            ),
            clock: clock
        )
    }

    package func credentials(purchaseId: String) throws -> [CustomerCredential] {
        try ledger.credentials.credentials(purchaseId: purchaseId)
    }

    /// Nil when there is no such credential.
    package func revoke(credentialId: String) throws -> CustomerCredential? {
        try ledger.credentials.revoke(id: credentialId, at: clock.nowMilliseconds())
    }

    /// A new credential in place of `credentialId` (revoked), covering the same purchases; the secret is shown
    /// this once. Nil when there is no such credential; refused for one already replaced (its replacement is the
    /// one to reissue).
    package func reissue(credentialId: String) throws -> (credential: CustomerCredential, secret: String)? {
        let secret = Identifiers.credentialSecret()
        let replacement = CustomerCredential(
            id: "cred_" + Identifiers.random(),
            bundleId: "",
            appAccountToken: nil,
            createdAt: clock.nowMilliseconds()
        )
        switch try ledger.credentials.reissue(
            id: credentialId,
            as: replacement,
            secretHash: identifiers.credentialHash(secret)
        ) {
        case .reissued(let issued): return (issued, secret)
        case .notFound: return nil
        case .alreadyReplaced(let by):
            throw AppAccessRefusal("\(credentialId) was already replaced by \(by); reissue that one")
        }
    }

    /// Every signing key, retired ones too, oldest first.
    package func keys() throws -> [SigningKeyRecord] {
        try ledger.signingKeys.keys(includingRetired: true)
    }

    /// `publishAheadSeconds`: nil for the default (longer than the JWKS may be cached).
    package func rotate(publishAheadSeconds: Int64?) throws -> SigningKeyRecord {
        try keyring.rotate(publishAheadSeconds: publishAheadSeconds ?? EntitlementKeyring.defaultPublishAheadSeconds)
    }

    package func retire(kid: String, force: Bool = false) throws {
        try keyring.retire(kid: kid, force: force)
    }
}
