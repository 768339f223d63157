/// How linkout learned of a token.
public enum TokenSource: String, Sendable, Codable, CaseIterable {
    /// The StoreKit redirect to the landing page.
    case url
    /// Forwarded by the app with `POST /v1/tokens`.
    case app
    /// Named by an App Store Server Notification before linkout saw it otherwise.
    case notification
}
