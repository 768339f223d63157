/// What an app's redemption gives it besides using up the code: a new credential, or the purchase added to
/// the credential it already holds.
public enum CredentialGrant: Sendable, Equatable {
    /// A new credential (`secretHash` is the keyed hash of the secret the app receives once).
    case issue(CustomerCredential, secretHash: String)
    /// The purchase joins this credential, which takes `account` if it has none yet (so it never covers
    /// purchases of two accounts).
    case extend(credentialId: String, account: String?)
}
