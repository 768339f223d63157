/// What reissuing a credential came to.
public enum ReissueOutcome: Sendable, Equatable {
    case reissued(CustomerCredential)
    case notFound
    /// It was reissued before: its replacement is the live one (two live replacements would both work).
    case alreadyReplaced(by: String)
}
