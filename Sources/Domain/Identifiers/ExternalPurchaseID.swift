/// The `externalPurchaseId` of an external purchase token: Apple's name for one customer's purchase through one
/// link, the key every report, line item and notification about that purchase is filed under.
public struct ExternalPurchaseID: Identifier {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// Where reports for this purchase go. Apple: sandbox ids begin with `SANDBOX`, and sandbox tokens are reported
    /// only to the sandbox host.
    public var environment: Environment { rawValue.hasPrefix("SANDBOX") ? .sandbox : .production }
}
