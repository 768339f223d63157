import Domain
import Storage

/// Which line items a report carries as restatements (Apple: "Reporting corrections": a `lineItemId` posted again,
/// `restatement: true`, only when Apple holds a version of it; without the flag Apple answers `DuplicateValueError`,
/// and with it for an item Apple never got, the restatement refers to nothing).
extension ReportPlanner {
    /// The ids among `carrying` of which an earlier version is in a report Apple accepted or is being sent
    /// (pending): by the time this report goes, Apple holds that version. `items` are the token's sendable items.
    func versionsAppleHolds(
        of carrying: [StoredLineItem],
        among items: [StoredLineItem],
        on externalPurchaseId: ExternalPurchaseID
    ) throws -> Set<LineItemID> {
        let carried = Set(carrying.map(\.rowId))
        let ids = Set(carrying.map(\.lineItemId))
        let earlier = items.filter {
            ids.contains($0.lineItemId) && !carried.contains($0.rowId) && $0.reportRequestIdentifier != nil
        }
        // Most reports carry new items only: the token's reports are read only when an earlier version was sent.
        guard !earlier.isEmpty else { return [] }
        let sent = Set(
            try ledger.reports.reports(for: externalPurchaseId).filter { $0.state != .rejected }.map(
                \.requestIdentifier
            )
        )
        return Set(earlier.filter { $0.reportRequestIdentifier.map(sent.contains) == true }.map(\.lineItemId))
    }
}
