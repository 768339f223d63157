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
        let dates = (planned.report.lineItems ?? []).map(\.common.creationDate)
        if let latest = dates.max(), LineItemScreen.waitsForItsDate(planned.problems, creationDate: latest, now: now) {
            // Every pass until then: not a line per pass at info level.
            logger.debug(
                "report waits: a line item is dated ahead of this server's clock",
                [
                    "external_purchase_id": planned.report.externalPurchaseId.rawValue,
                    "waits_ms": "\(latest - now)",
                ]
            )
            return false
        }
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
    /// planned again without them: one bad item never blocks its token. A refund wrong only in its net is netted
    /// again instead (`renetUnsentRefunds`). True when anything changed.
    func setAsideRefused(_ planned: PlannedReport, now: Int64) throws -> Bool {
        // An item whose date has not come yet by the pass's clock waits for it (`LineItemScreen.waitsForItsDate`):
        // its report is not queued until then (`enqueue`), and nothing is set aside.
        let dates = Dictionary(
            (planned.report.lineItems ?? []).map { ($0.common.lineItemId, $0.common.creationDate) },
            uniquingKeysWith: { first, _ in first }
        )
        let named = Dictionary(grouping: planned.problems.filter { $0.lineItemId != nil }) { $0.lineItemId ?? "" }
            .filter { id, problems in
                !LineItemScreen.waitsForItsDate(problems, creationDate: dates[id] ?? Int64.max, now: now)
            }
        guard !named.isEmpty else { return false }
        let token = planned.report.externalPurchaseId
        let items = try ledger.reports.lineItems(for: token)
        let renetted = try renetUnsentRefunds(planned, named: named, stored: items)
        let rows = Set(planned.lineItemRows)
        let notes = items.filter {
            rows.contains($0.rowId) && named[$0.lineItemId] != nil && !renetted.contains($0.lineItemId)
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
        guard try ledger.reports.setAsideUnsent(notes) > 0 else { return !renetted.isEmpty }
        logger.error(
            "line item set aside: Apple would refuse it",
            [
                "external_purchase_id": token.rawValue,
                "problems": planned.problems.map(\.description).joined(separator: "; "),
            ]
        )
        return true
    }

    /// Refunds Apple does not hold (never sent, or in the rejected report this one revises) whose only problem is
    /// their net, netted again where the report carries them (the buy less what Apple holds and the refunds before
    /// them in the report) and rewritten in place, when the report then finds nothing else wrong with them. Such a
    /// refund counted a refund of its buy that changed since: one Apple refused in a report of its own (a refund
    /// made after the refusal is netted without it, and this one goes the same way, while the refused one waits
    /// for the operator), or one the operator restated with another amount. Each is netted against the items
    /// before it only, so a later pass never changes it again.
    private func renetUnsentRefunds(
        _ planned: PlannedReport,
        named: [LineItemID: [ReportProblem]],
        stored tokenItems: [StoredLineItem]
    ) throws -> Set<LineItemID> {
        let externalPurchaseId = planned.report.externalPurchaseId
        guard var items = planned.report.lineItems, let token = try ledger.tokens.token(externalPurchaseId) else {
            return []
        }
        let rows = Set(planned.lineItemRows)
        // Apple holds none of them: never sent (the rows this report claims), or carried by the rejected report
        // this one revises.
        let stored = tokenItems.filter { row in
            guard !row.isSetAside else { return false }
            guard let sentIn = row.reportRequestIdentifier else { return rows.contains(row.rowId) }
            return sentIn == planned.revises
        }
        let validator = ReportValidator(
            token: token.token,
            earlierLineItems: planned.earlierLineItems,
            now: clock.nowMilliseconds()
        )
        var renetted: Set<LineItemID> = []
        for index in items.indices {
            let id = items[index].common.lineItemId
            guard case .refund = items[index], items[index].common.restatement != true,
                let problems = named[id], problems.allSatisfy({ $0.name == "IncorrectNetAmountError" }),
                let row = stored.last(where: { $0.lineItemId == id })
            else { continue }
            var refund = items[index]
            refund.setNet(joining: planned.earlierLineItems + items[..<index])
            var report = planned.report
            report.lineItems = items
            report.lineItems?[index] = refund
            guard !validator.problems(in: report).contains(where: { $0.lineItemId == id }),
                try ledger.reports.rewriteUnsent(
                    rowId: row.rowId,
                    from: row.body,
                    to: AppleRejection.encodeLineItem(refund),
                    orIn: planned.revises
                )
            else { continue }
            items[index] = refund
            renetted.insert(id)
            logger.notice(
                "refund netted again against what the token holds",
                ["external_purchase_id": externalPurchaseId.rawValue, "line_item_id": id.rawValue]
            )
        }
        return renetted
    }
}
