/// What processing a payment event came to: its kind, which decides how loudly the processor reports it, and the
/// words stored with the event for the operator. A literal is a `done` outcome; the other kinds are named.
public enum PaymentOutcome: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// Recorded, queued for Apple, linked, ignored, or known already.
    case done(String)
    /// A paid sale or refund that cannot become an Apple line item: a person must act.
    case notReportable(String)
    /// Money that by rule does not go to Apple (README, "What linkout reports"): the words say why.
    case notReported(String)

    public init(stringLiteral value: String) { self = .done(value) }

    public var description: String {
        switch self {
        case .done(let text), .notReportable(let text), .notReported(let text): text
        }
    }

    /// Whether a person must act (`notReportable`).
    public var needsAPerson: Bool {
        if case .notReportable = self { return true }
        return false
    }

    /// The same kind of outcome with more said.
    public static func += (outcome: inout PaymentOutcome, more: String) {
        switch outcome {
        case .done(let text): outcome = .done(text + more)
        case .notReportable(let text): outcome = .notReportable(text + more)
        case .notReported(let text): outcome = .notReported(text + more)
        }
    }
}
