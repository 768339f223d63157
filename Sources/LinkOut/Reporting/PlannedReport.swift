import ExternalPurchase

/// A report to put in the outbox, or a rejected one to revise.
public struct PlannedReport: Sendable {
    public var report: ExternalPurchaseReport
    public var environment: String
    public var bundleId: String
    /// Line items (ledger rows) the report carries.
    public var lineItemRows: [Int64]
    /// The rejected report this revises, keeping its `requestIdentifier`.
    public var revises: String?
    public var problems: [ReportProblem]
}
