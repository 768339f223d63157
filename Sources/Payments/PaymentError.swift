/// Why a payment could not be started. The application turns `.unavailable` into a "try again" page and
/// `.rejected` into an error page plus a loud log line, because only an operator can fix it.
///
/// `message` is written for logs and operators. It never contains an API key or webhook secret: messages that
/// come from elsewhere (libcurl, Stripe's error body) pass through `redactingSecrets` first.
public struct PaymentError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// The provider could not be reached or asked to come back later: network error, timeout, 5xx, 429.
        /// The same request may succeed in a moment.
        case unavailable
        /// The provider refused the request (other 4xx: a bad key, a bad parameter, an unsupported currency), or
        /// the request could not even be built. Retrying the same request will not help.
        case rejected
    }

    public var kind: Kind
    public var message: String
    /// The provider's HTTP status, when there was an answer.
    public var status: Int?
    /// The provider's own error code (Stripe's `error.code` or `error.type`), when it gave one.
    public var providerCode: String?

    public init(_ kind: Kind, _ message: String, status: Int? = nil, providerCode: String? = nil) {
        self.kind = kind
        self.message = Self.redactingSecrets(message)
        self.status = status
        self.providerCode = providerCode.map(Self.redactingSecrets)
    }

    /// As logs and `linkout check` show it to an operator: unavailable or refused, the provider's status and code.
    public var description: String {
        var text = kind == .unavailable ? "provider unavailable" : "provider refused"
        let details = [status.map { "HTTP \($0)" }, providerCode].compactMap { $0 }
        if !details.isEmpty { text += " (" + details.joined(separator: ", ") + ")" }
        return text + ": \(message)"
    }

    /// Prefixes of Stripe secrets: secret and restricted keys, and webhook signing secrets. Publishable keys
    /// (`pk_`) are public by design and left alone.
    static let secretPrefixes = ["sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"]

    /// `text` with every word that starts like a Stripe secret replaced by `[redacted]`. Stripe masks keys in
    /// its own messages ("Invalid API Key provided: sk_test_****1234"), but a message must be safe to log
    /// whatever produced it.
    public static func redactingSecrets(_ text: String) -> String {
        guard secretPrefixes.contains(where: { text.contains($0) }) else { return text }
        var result = ""
        var word = ""
        func flush() {
            result += secretPrefixes.contains(where: { word.hasPrefix($0) }) ? "[redacted]" : word
            word = ""
        }
        for character in text {
            if character.isLetter || character.isNumber || character == "_" || character == "*" {
                word.append(character)
            } else {
                flush()
                result.append(character)
            }
        }
        flush()
        return result
    }
}
