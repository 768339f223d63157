/// What an app's redemption gives it besides using up the code: a new credential, or the purchase added to
/// the credential it already holds.
public enum CredentialGrant: Sendable, Equatable {
    /// A new credential (`secretHash` is the keyed hash of the secret the app receives once).
    case issue(CustomerCredential, secretHash: String)
    /// The purchase joins this credential.
    case extend(credentialId: String)
}
