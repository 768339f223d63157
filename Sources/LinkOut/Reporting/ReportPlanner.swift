import Domain
import ExternalPurchase
import Foundation
import Storage

/// Decides what is due: tokens created `noLineItemAfterSeconds` ago without line items → `NO_LINE_ITEM`;
/// custom-link tokens once expired → `NO_LINE_ITEM`, and extra ones of a customer → `DUPLICATE_TOKEN` once the
/// pass's window of custom-link tokens reaches them (`duplicateCursor`);
/// new line items → `LINE_ITEM`; a rejected report whose token got new line items → the full report again under the
/// same `requestIdentifier` (Apple: resend corrected data under the original identifier). It reads the ledger
/// and writes nothing, so `linkout report --dry-run` can print exactly what a pass would queue.
struct ReportPlanner: Sendable {
    let ledger: Ledger
    let noLineItemAfterSeconds: Int64
    /// Most reports planned per pass; the rest wait for the next one.
    let batchLimit: Int
    /// How long an open payment holds back a `NO_LINE_ITEM` report: the running provider's longest session
    /// (`ProviderRegistration.sessionLifetime`; Stripe's Checkout Session: 24 hours).
    let paymentHold: Int64
    /// The identifier each new report gets, from its content.
    let identifiers: ReportIdentifiers
    /// Where this pass's window of unexpired custom-link tokens checked for duplicates starts; moved on by it.
    var duplicateCursor = DuplicateScanCursor()
    /// Most unexpired custom-link tokens checked for duplicates per pass (see `duplicateCursor`).
    var duplicateWindowSize = Self.duplicateWindowSize

    /// A pass checks this many unexpired custom-link tokens for duplicates, the next pass the next ones: a duplicate
    /// waits at most as many passes as there are windows of them, which Apple allows (it reminds of an unreported
    /// custom-link token monthly: `ACTIVE_TOKEN_REMINDER`, Apple: "subtype").
    static let duplicateWindowSize = 500

    /// How long a delayed payment method (SEPA debit: up to 14 days) holds it back once pending: long enough for
    /// most, and with the 48-hour quiet time still inside Apple's 10-day deadline.
    static let pendingPaymentHoldMilliseconds: Int64 = Milliseconds.days(7)
    /// No hold keeps a token unreported past 9 days after its creation: Apple's `UNREPORTED` notice comes at 10.
    static let holdsEndAfterMilliseconds: Int64 = Milliseconds.days(9)

    /// The payments that may still complete at `now`, and whose purchase would then be their token's report: one
    /// started within the provider's session lifetime, or pending within `pendingPaymentHoldMilliseconds`. The
    /// hold ends far inside Apple's 10-day deadline (`holdsEndAfterMilliseconds`).
    static func paymentsUnderWay(now: Int64, sessionLifetime: Int64) -> PaymentsUnderWay {
        PaymentsUnderWay(now: now, openSince: now - sessionLifetime, pendingSince: now - pendingPaymentHoldMilliseconds)
    }

    /// What is due now, without writing anything (`linkout report --dry-run` prints this).
    func plan(now: Int64) throws -> [PlannedReport] {
        var planned: [PlannedReport] = []
        let quietSince = now - noLineItemAfterSeconds * 1000
        let underWay = Self.paymentsUnderWay(now: now, sessionLifetime: paymentHold)
        let window = try ledger.reports.duplicateWindow(after: duplicateCursor.current, size: duplicateWindowSize)
        let tokens = try ledger.reports.tokensNeedingReports(
            now: now,
            quietSince: quietSince,
            paymentsOpenSince: underWay.openSince,
            paymentsPendingSince: underWay.pendingSince,
            holdsEndForTokensCreatedBefore: now - Self.holdsEndAfterMilliseconds,
            duplicateWindow: window,
            paymentsUnderWay: underWay,
            limit: batchLimit
        )
        // A batch cut at its limit may have left some of the window's duplicates for later: the same window is
        // checked again until a batch holds all that is due.
        if tokens.count < batchLimit { duplicateCursor.move(to: window.next) }
        for token in tokens {
            let items = try sendableLineItems(of: token.token.externalPurchaseId)
            let fresh = items.filter { $0.reportRequestIdentifier == nil }
            let status: ReportStatus
            if !fresh.isEmpty {
                status = .lineItem
            } else if try isDuplicate(token, paying: underWay) {
                status = .duplicateToken
            } else {
                status = .noLineItem
            }
            let carrying = Self.latestVersions(fresh)
            planned.append(
                try build(
                    token,
                    status: status,
                    items: items,
                    carrying: carrying,
                    claiming: fresh,
                    requestIdentifier: try RequestIdentifier(identifier(token, status, carrying)),
                    now: now
                )
            )
        }
        planned += try revisions(now: now)
        return planned
    }

    /// Rejected reports whose token got new line items (a correction, or new ones): the full report again under the
    /// same `requestIdentifier` (Apple: resubmit a failed report under its identifier, "Send External Purchase Report",
    /// "requestIdentifier"). Paged by key through all of them, so rejected reports without news never hold back those
    /// behind them.
    private func revisions(now: Int64) throws -> [PlannedReport] {
        var planned: [PlannedReport] = []
        var after: RequestIdentifier?
        while planned.count < batchLimit {
            let page = try ledger.reports.rejectedReportsWithNewLineItems(after: after, limit: batchLimit)
            guard let last = page.last else { break }
            after = last.requestIdentifier
            for rejected in page where planned.count < batchLimit {
                guard let token = try ledger.tokens.token(rejected.externalPurchaseId) else { continue }
                let items = try sendableLineItems(of: token.token.externalPurchaseId)
                let fresh = items.filter { $0.reportRequestIdentifier == nil }
                guard !fresh.isEmpty else { continue }
                // A restated item (same lineItemId, `restatement: true`) replaces the version the rejected report
                // carried: Apple "uses only the most recent version", and one lineItemId twice in a report is
                // Apple's `DuplicateValueError`, which would keep the token stuck for good.
                let carried = items.filter { $0.reportRequestIdentifier == rejected.requestIdentifier } + fresh
                var revision = try build(
                    token,
                    status: .lineItem,
                    items: items,
                    carrying: Self.latestVersions(carried),
                    claiming: fresh,
                    requestIdentifier: rejected.requestIdentifier,
                    now: now
                )
                revision.revises = rejected.requestIdentifier
                planned.append(revision)
            }
        }
        return planned
    }

    /// A token's line items, without those set aside (`StoredLineItem.isSetAside`).
    private func sendableLineItems(of externalPurchaseId: ExternalPurchaseID) throws -> [StoredLineItem] {
        try ledger.reports.lineItems(for: externalPurchaseId).filter { !$0.isSetAside }
    }

    private func build(
        _ token: StoredToken,
        status: ReportStatus,
        items: [StoredLineItem],
        carrying: [StoredLineItem],
        claiming: [StoredLineItem],
        requestIdentifier: RequestIdentifier,
        now: Int64
    ) throws -> PlannedReport {
        let decoder = JSONDecoder()
        let carriedRows = Set(carrying.map(\.rowId))
        let held = try VersionsAtApple(ledger: ledger).held(
            Set(carrying.map(\.lineItemId)),
            among: items,
            except: carriedRows,
            on: token.token.externalPurchaseId
        )
        // Decoded only for a buy that needs it: most reports carry none.
        var standing: [LineItem]?
        let lineItems = try carrying.map { stored in
            var item = try decoder.decode(LineItem.self, from: Data(stored.body.utf8))
            // A restatement exactly when Apple holds or is being sent an earlier version, whatever the version said
            // when it was made: a report may have taken the earlier one since, or been refused. A retraction is one
            // by definition (Apple: `erroneouslySubmitted` requires `restatement`).
            if item.common.erroneouslySubmitted != true {
                let restated = held.contains(stored.lineItemId)
                // A buy made as Apple's first version (a late renewal's days, while a report was taking the one
                // before) that goes as a restatement nets what stands of it after its refunds, as one made as a
                // restatement does (`ReportActions.newVersion`): with its first version's net Apple refused it.
                if restated && item.common.restatement != true && item.isBuy {
                    let holds = standing ?? LineItemScreen.standing(items)
                    standing = holds
                    item.setNet(joining: holds)
                }
                item.setRestatement(restated)
            }
            return item
        }
        let earlier = try items.filter { !carriedRows.contains($0.rowId) }.map {
            try decoder.decode(LineItem.self, from: Data($0.body.utf8))
        }
        let report = ExternalPurchaseReport(
            requestIdentifier: requestIdentifier,
            externalPurchaseId: token.token.externalPurchaseId,
            status: status,
            lineItems: status == .lineItem ? lineItems : nil
        )
        let validator = ReportValidator(token: token.token, earlierLineItems: earlier, now: now)
        return PlannedReport(
            report: report,
            environment: token.token.environment,
            bundleId: token.token.bundleId,
            lineItemRows: claiming.map(\.rowId),
            revises: nil,
            problems: validator.problems(in: report),
            earlierLineItems: earlier
        )
    }

    /// The most recent version of each line item (Apple "uses only the most recent version" of a lineItemId), in
    /// the place its first version had: a buy restated after Apple refused the report stays ahead of the refunds
    /// that refer to it (in its new version's place it followed them).
    static func latestVersions(_ items: [StoredLineItem]) -> [StoredLineItem] {
        var latest: [String: StoredLineItem] = [:]
        for item in items { latest[item.lineItemId.rawValue] = item }
        var placed: Set<String> = []
        return items.compactMap { item in
            placed.insert(item.lineItemId.rawValue).inserted ? latest[item.lineItemId.rawValue] : nil
        }
    }

    /// Apple: report every extra custom-link token of one customer and type, active at the same time, as
    /// `DUPLICATE_TOKEN` ("Reporting unrecognized tokens and tokens without transactions"). The ledger groups refreshed
    /// tokens (same app, type, creation and expiration dates) and tokens of one `appAccountToken`; the token with line
    /// items, else the first seen, stays the one transactions are reported on. Only `ACQUISITION`/`SERVICES` tokens are
    /// ever duplicates (Apple: `DuplicateTokenStatusNotAllowedError`).
    func isDuplicate(_ token: StoredToken, paying: PaymentsUnderWay) throws -> Bool {
        try ledger.reports.isDuplicateToken(token.token.externalPurchaseId, paying: paying)
    }

    /// The content's identifier, unless this ledger already used it for a report of the same content (sent
    /// and refused before, say): a report is never queued under an identifier the outbox holds.
    private func identifier(_ token: StoredToken, _ status: ReportStatus, _ carrying: [StoredLineItem]) throws
        -> String
    {
        let derived = identifiers.identifier(
            externalPurchaseId: token.token.externalPurchaseId,
            status: status,
            lineItemBodies: status == .lineItem ? carrying.map(\.body) : []
        )
        return try ledger.reports.report(RequestIdentifier(derived)) == nil ? derived : Self.newIdentifier()
    }

    static func newIdentifier() -> String {
        UUID().uuidString.lowercased()
    }
}
