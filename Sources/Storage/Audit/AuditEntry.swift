/// One action that changed what Apple, the payment provider or the developer's backend receives, as the audit
/// log keeps it: when, who (a credential's fingerprint, never the secret), from where, what, and the state before
/// and after.
public struct AuditEntry: Sendable, Equatable, Codable {
    /// Order of appending (0 until appended).
    public var id: Int64
    /// UNIX ms.
    public var at: Int64
    /// `admin:<fingerprint>` (the admin token), `dashboard:<fingerprint>`, `cli:<user>@<host>`, or `linkout` for
    /// what the server noticed itself.
    public var actor: String
    /// The client's address for HTTP, `local` for the command line.
    public var origin: String
    /// `report.resend`, `line_item.retract`, `dashboard.sign_in_failed`, `config.commission_regimes`, ...
    public var action: String
    /// What it was done to: a token, a line item, a credential, a key.
    public var subject: String?
    public var before: String?
    public var after: String?

    public init(
        at: Int64,
        actor: String,
        origin: String,
        action: String,
        subject: String? = nil,
        before: String? = nil,
        after: String? = nil
    ) {
        id = 0
        self.at = at
        self.actor = actor
        self.origin = origin
        self.action = action
        self.subject = subject
        self.before = before
        self.after = after
    }
}
