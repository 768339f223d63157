import Domain
import Storage

/// Which line items Apple holds a version of, or is being sent one. Apple takes a `lineItemId` posted again only as
/// a restatement of the version it holds ("Reporting corrections": `restatement: true`, which "overwrites the
/// previous version"; without the flag, `DuplicateValueError`), and a restatement of an item it never took refers to
/// nothing: whether a new version is one is this, decided as it is made and again as it is sent.
struct VersionsAtApple {
    let ledger: Ledger

    /// The ids among `ids` with a version in `items` (a token's line items, those set aside left out), other than
    /// the rows `except`, in a report Apple accepted or that is on its way (pending): by the time a new version
    /// goes, Apple holds that one.
    func held(
        _ ids: Set<LineItemID>,
        among items: [StoredLineItem],
        except rows: Set<Int64> = [],
        on externalPurchaseId: ExternalPurchaseID
    ) throws -> Set<LineItemID> {
        let sentBefore = items.filter {
            ids.contains($0.lineItemId) && !rows.contains($0.rowId) && $0.reportRequestIdentifier != nil
        }
        // Most reports carry new items only: the token's reports are read only when an earlier version was sent.
        guard !sentBefore.isEmpty else { return [] }
        let atApple = Set(
            try ledger.reports.reports(for: externalPurchaseId).filter { $0.state != .rejected }.map(
                \.requestIdentifier
            )
        )
        return Set(sentBefore.filter { $0.reportRequestIdentifier.map(atApple.contains) == true }.map(\.lineItemId))
    }
}
