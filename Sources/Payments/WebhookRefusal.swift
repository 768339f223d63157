/// Why a webhook delivery is not stored (answered 400, nothing written). The reason names the problem, never
/// the secret or a signature.
public enum WebhookRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The signature is missing, malformed, too old or does not match.
    case signature(String)
    /// Signed, but without an event id and type.
    case notAnEvent(String)

    public var description: String {
        switch self {
        case .signature(let reason), .notAnEvent(let reason): reason
        }
    }
}
