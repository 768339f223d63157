package import Domain
package import ExternalPurchase

/// A report to put in the outbox, or a rejected one to revise.
package struct PlannedReport: Sendable {
    package var report: ExternalPurchaseReport
    package var environment: Environment
    package var bundleId: BundleID
    /// Line items (ledger rows) the report settles: those it carries, and earlier versions a restatement in it
    /// replaces.
    package var lineItemRows: [Int64]
    /// The rejected report this revises, keeping its `requestIdentifier`.
    package var revises: RequestIdentifier?
    package var problems: [ReportProblem]
    /// What Apple holds or is being sent before this report, as the problems were found against it.
    package var earlierLineItems: [LineItem] = []
}
