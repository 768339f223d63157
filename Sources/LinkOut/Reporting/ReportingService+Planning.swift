import Domain
import ExternalPurchase
import Foundation
import Lifecycle
import Logging
import Payments
import Storage
import Synchronization

/// Planning within a pass: held line items placed, what is due planned (`ReportPlanner`), and each planned
/// report either queued, or its items Apple would refuse set aside first.
extension ReportingService {
    /// Held line items (no token of the customer was active at their date) go on a token the app forwarded since,
    /// before planning, so this pass reports them.
    func placeLineItemsAwaitingToken() {
        do {
            for placed in try LineItemPlacement(ledger: ledger).placeAwaitingToken() {
                logger.info(
                    "held line item placed on a token of the customer",
                    [
                        "line_item_id": placed.item.lineItemId.rawValue,
                        "held_on": placed.item.externalPurchaseId.rawValue,
                        "external_purchase_id": placed.token.rawValue,
                    ]
                )
            }
        } catch {
            logger.error("held line items not placed", ["error": "\(error)"])
        }
    }

    /// Planning batches of `batchLimit` tokens per pass: 100,000 reports at most, the rest in the next pass.
    static let planningBatchesPerPass = 500

    /// What is due now, without writing anything (`linkout report --dry-run` prints this).
    package func plan(now: Int64) throws -> [PlannedReport] {
        try ReportPlanner(
            ledger: ledger,
            noLineItemAfterSeconds: configuration.reporting.noLineItemAfterSeconds,
            batchLimit: Self.batchLimit,
            paymentHold: configuration.payments.registration.sessionLifetime,
            identifiers: try reportIdentifiers(),
            duplicateCursor: duplicateCursor
        ).plan(now: now)
    }

    /// The planner's identifiers, keyed by the installation's secret (read from the ledger once).
    func reportIdentifiers() throws -> ReportIdentifiers {
        if let made = identifiers.withLock({ $0 }) { return made }
        let made = ReportIdentifiers(secret: try ledger.settings.secret(named: "identifiers"))
        identifiers.withLock { $0 = made }
        return made
    }

    /// Puts a planned report in the outbox; false when it breaks Apple's rules and is left out (logged).
    func enqueue(_ planned: PlannedReport, now: Int64) throws -> Bool {
        guard planned.problems.isEmpty else {
            logger.error(
                "report not queued: it breaks Apple's rules",
                [
                    "external_purchase_id": planned.report.externalPurchaseId.rawValue,
                    "problems": planned.problems.map(\.description).joined(separator: "; "),
                ]
            )
            return false
        }
        let body = try AppleJSON.text(planned.report)
        if let revised = planned.revises {
            try ledger.reports.reviseRejectedReport(
                revised,
                body: body,
                lineItemRows: planned.lineItemRows,
                now: now
            )
            return true
        }
        let stored = StoredReport(
            requestIdentifier: planned.report.requestIdentifier,
            externalPurchaseId: planned.report.externalPurchaseId,
            environment: planned.environment,
            bundleId: planned.bundleId,
            status: planned.report.status,
            body: body,
            nextAttemptAt: now,
            createdAt: now
        )
        do {
            try ledger.reports.enqueueReport(stored, lineItemRows: planned.lineItemRows)
        } catch {
            // Another instance on the same database queued this token's report first (both planned it from the
            // same tables): theirs goes out, nothing is wrong.
            guard error.code == .conflict else { throw error }
            logger.debug("report already queued", ["external_purchase_id": stored.externalPurchaseId.rawValue])
            return false
        }
        return true
    }

    /// Sets aside the unsent line items the planned report's problems name (`LineItemScreen`), so the token is
    /// planned again without them: one bad item never blocks its token. True when any was.
    func setAsideRefused(_ planned: PlannedReport) throws -> Bool {
        let named = Dictionary(grouping: planned.problems.filter { $0.lineItemId != nil }) { $0.lineItemId ?? "" }
        guard !named.isEmpty else { return false }
        let token = planned.report.externalPurchaseId
        let rows = Set(planned.lineItemRows)
        let notes = try ledger.reports.lineItems(for: token).filter {
            rows.contains($0.rowId) && named[$0.lineItemId] != nil
        }.map { item in
            (
                rowId: item.rowId,
                note: LineItemScreen.note(
                    named[item.lineItemId] ?? [],
                    externalPurchaseId: token,
                    lineItemId: item.lineItemId
                )
            )
        }
        guard try ledger.reports.setAsideUnsent(notes) > 0 else { return false }
        logger.error(
            "line item set aside: Apple would refuse it",
            [
                "external_purchase_id": token.rawValue,
                "problems": planned.problems.map(\.description).joined(separator: "; "),
            ]
        )
        let onlyNet = named.filter { $0.value.allSatisfy { $0.name == "IncorrectNetAmountError" } }.keys
        try renetRefunds(Set(onlyNet), on: token)
        return true
    }

    /// Refunds Apple never saw, just set aside for their net alone, taken again at once with the net of what the
    /// token now holds, when Apple's rules then take them. Such a refund was made while an earlier refund of its
    /// buy was on its way and counted it; Apple has refused that one since (in another report), and a refund made
    /// after the refusal is netted without it: this one goes the same way, and the refused one waits for the
    /// operator as before.
    private func renetRefunds(_ ids: Set<LineItemID>, on externalPurchaseId: ExternalPurchaseID) throws {
        guard !ids.isEmpty, let token = try ledger.tokens.token(externalPurchaseId) else { return }
        let screen = LineItemScreen(ledger: ledger)
        let now = clock.nowMilliseconds()
        for id in ids.sorted(by: { $0.rawValue < $1.rawValue }) {
            let versions = try ledger.reports.lineItemVersions(id)
            guard versions.allSatisfy({ $0.reportRequestIdentifier == nil }), let latest = versions.last else {
                continue
            }
            var refund = try JSONDecoder().decode(LineItem.self, from: Data(latest.body.utf8))
            guard case .refund = refund else { continue }
            refund.setNet(joining: try screen.standing(on: externalPurchaseId))
            guard try screen.problems(refund, on: token, now: now).isEmpty else { continue }
            let body = try AppleRejection.encodeLineItem(refund)
            _ = try ledger.reports.correctLineItem(id, of: externalPurchaseId, replacement: body, now: now)
            logger.notice(
                "refund netted again against what the token holds",
                ["external_purchase_id": externalPurchaseId.rawValue, "line_item_id": id.rawValue]
            )
        }
    }
}
