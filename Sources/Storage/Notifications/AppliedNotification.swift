/// What acting on a notification did: the outcome recorded on it, and the fields of a known token that Apple's
/// values corrected (a landing or a forward recorded them first, from a token nobody signed).
public struct AppliedNotification: Sendable, Equatable {
    public var outcome: NotificationOutcome
    public var corrections: [TokenCorrection]

    package init(outcome: NotificationOutcome, corrections: [TokenCorrection] = []) {
        self.outcome = outcome
        self.corrections = corrections
    }
}

/// One field of a token as it was recorded and as Apple's notification gave it; `nil` is "absent". Dates and
/// ids only, never the raw token, so it may be logged.
public struct TokenCorrection: Sendable, Equatable {
    /// Apple's name of the field (`tokenCreationDate`, `tokenType`, ...).
    public var field: String
    public var recorded: String?
    public var apple: String?

    package init(field: String, recorded: String?, apple: String?) {
        self.field = field
        self.recorded = recorded
        self.apple = apple
    }
}
