package import Domain
import ExternalPurchase
import Foundation
package import Lifecycle
package import Storage

/// What an operator can do about a token that needs attention, from the command line (`linkout report …`) or the admin
/// API (`POST /admin/tokens/{id}/…`): send its rejected report again, report it `NO_LINE_ITEM`, or restate or retract
/// one of its line items (Apple: "Reporting corrections"). Each action is one ledger transaction (a restate or retract
/// then checks the buy's set-aside refunds again, each in its own); the reporting pass sends the result.
package struct ReportActions: Sendable {
    package struct Refusal: Error, Equatable, CustomStringConvertible {
        package enum Kind: Sendable, Equatable {
            case unknownToken
            /// The action does not fit the token's state (nothing rejected, already reported, …).
            case conflict
            /// The line item given breaks Apple's rules.
            case invalid
        }

        package var kind: Kind
        package var description: String
    }

    /// What the action did, for the admin API's JSON and the command's output.
    package struct Outcome: Sendable, Equatable, Encodable {
        package var externalPurchaseId: ExternalPurchaseID
        package var action: String
        package var detail: String
    }

    let ledger: Ledger
    let clock: Clock

    package init(ledger: Ledger, clock: Clock = .system) {
        self.ledger = ledger
        self.clock = clock
    }

    /// The token's rejected report goes again, same bytes and `requestIdentifier` (after the cause was fixed
    /// at Apple's side, say).
    package func resend(_ externalPurchaseId: ExternalPurchaseID) throws -> Outcome {
        _ = try token(externalPurchaseId)
        guard try ledger.reports.reviveRejectedReport(for: externalPurchaseId, now: clock.nowMilliseconds()) else {
            throw Refusal(kind: .conflict, description: "the token has no rejected report to send again")
        }
        return Outcome(externalPurchaseId: externalPurchaseId, action: "resend", detail: "the rejected report is due")
    }

    /// Reports the token `NO_LINE_ITEM`: its rejected report's content is replaced under the same `requestIdentifier`,
    /// or, with no report yet, a new one is queued. Refused once Apple holds line items for the token (Apple:
    /// `LineItemStatusRegressionError`, "Error messages and codes").
    package func reportNoLineItem(_ externalPurchaseId: ExternalPurchaseID) throws -> Outcome {
        let token = try token(externalPurchaseId)
        let reports = try ledger.reports.reports(for: externalPurchaseId)
        if reports.contains(where: {
            $0.state == .accepted && $0.status == .lineItem
        }) {
            throw Refusal(
                kind: .conflict,
                description: "Apple holds line items for this token: NO_LINE_ITEM would be a status regression; "
                    + "retract the line items instead"
            )
        }
        // A person paid on the token (whatever happened since: a refund, a subscription's end, is reported as a
        // line item too): NO_LINE_ITEM would tell Apple nobody paid, and take the sale out of the month's money.
        let sales = try ledger.payments.purchases(externalPurchaseId: externalPurchaseId).filter {
            ReportingPolicy.isSaleForApple(live: $0.live, environment: token.token.environment)
        }
        if let sale = sales.first {
            let id = externalPurchaseId.shellWord
            throw Refusal(
                kind: .conflict,
                description: "purchase \(sale.purchaseId) was paid on this token: NO_LINE_ITEM would tell Apple nobody "
                    + "paid; correct its line item (linkout report restate \(id) LINE_ITEM_ID FILE), send the report "
                    + "again once its cause is fixed (linkout report resend \(id)), or drop an item made in error "
                    + "(linkout report retract \(id) LINE_ITEM_ID)"
            )
        }
        // A line item waits for the token's next report (restated a moment ago, or posted by the backend):
        // NO_LINE_ITEM sent first told Apple nobody paid, and the item followed it.
        let items = try ledger.reports.lineItems(for: externalPurchaseId)
        if let waiting = items.first(where: {
            $0.reportRequestIdentifier == nil && $0.correction == nil && $0.awaitingTokenSince == nil
        }) {
            throw Refusal(
                kind: .conflict,
                description: "line item \(waiting.lineItemId) waits to be reported on this token: NO_LINE_ITEM would "
                    + "tell Apple nobody paid; it goes with the token's next report, and once Apple holds it, an item "
                    + "made in error is retracted (linkout report retract \(externalPurchaseId.shellWord) "
                    + "\(waiting.lineItemId.shellWord))"
            )
        }
        let now = clock.nowMilliseconds()
        if let rejected = reports.first(where: { $0.state == .rejected }) {
            try replaceWithNoLineItem(
                rejected,
                note: "withdrawn: the operator reported the token NO_LINE_ITEM",
                now: now
            )
            return Outcome(
                externalPurchaseId: externalPurchaseId,
                action: "no-line-item",
                detail: "the rejected report \(rejected.requestIdentifier) goes again as NO_LINE_ITEM"
            )
        }
        guard reports.isEmpty else {
            throw Refusal(kind: .conflict, description: "the token has a report already (pending or accepted)")
        }
        // Only an answer to a token that needs attention (every item set aside before it was sent): any other
        // token is reported as its line items say, NO_LINE_ITEM itself once nothing happened on it in time, and
        // a NO_LINE_ITEM sent ahead of that could precede the LINE_ITEM of a payment still in progress.
        guard items.contains(where: \.needsCorrection) else {
            throw Refusal(
                kind: .conflict,
                description: "the token needs no attention: reporting reports it as its line items say "
                    + "(NO_LINE_ITEM once nothing happened on it within reporting.noLineItemAfterSeconds)"
            )
        }
        let identifier = ReportPlanner.newIdentifier()
        let report = ExternalPurchaseReport(
            requestIdentifier: RequestIdentifier(identifier),
            externalPurchaseId: externalPurchaseId,
            status: .noLineItem
        )
        do {
            try ledger.reports.enqueueReport(
                StoredReport(
                    requestIdentifier: RequestIdentifier(identifier),
                    externalPurchaseId: externalPurchaseId,
                    environment: token.token.environment,
                    bundleId: token.token.bundleId,
                    status: report.status,
                    body: try AppleRejection.encode(report),
                    nextAttemptAt: now,
                    createdAt: now
                ),
                lineItemRows: []
            )
        } catch let error as StorageError where error.code == .conflict {
            throw Refusal(kind: .conflict, description: "the token has a report already")
        }
        return Outcome(externalPurchaseId: externalPurchaseId, action: "no-line-item", detail: "queued \(identifier)")
    }

    /// A corrected version of a line item (`restatement: true` when Apple holds an earlier one): it replaces the
    /// versions set aside and goes in the token's next report.
    package func restate(_ externalPurchaseId: ExternalPurchaseID, lineItemId: LineItemID, body: String) throws
        -> Outcome
    {
        let token = try token(externalPurchaseId)
        // Text that is not JSON, or that JSONDecoder lets through and another reader of the body would not read
        // the same way, is said as such first (the route says it with its own codes; `linkout report restate
        // FILE` hears it here), not as a line item of the wrong shape.
        guard let text = TokenDecoder.utf8JSONText(Array(body.utf8)).map(Array.init) else {
            throw Refusal(kind: .invalid, description: "the body is not JSON text in UTF-8 (it holds a NUL)")
        }
        guard JSONGrammar.accepts(text) else {
            throw Refusal(kind: .invalid, description: "the body is not JSON (RFC 8259): \(JSONGrammar.laxnesses)")
        }
        var item: LineItem
        do {
            item = try JSONDecoder().decode(LineItem.self, from: Data(body.utf8))
        } catch {
            let field = LineItemWholeNumbers.firstOffending(inBody: Array(body.utf8))
            throw Refusal(
                kind: .invalid,
                description: field.map(LineItemWholeNumbers.message)
                    ?? "the body is not one of Apple's line items: "
                    + ((error as? DecodingError).map { LineItemsAPI.problem($0, shape: "one line item") }?.message
                        ?? "it is not JSON")
            )
        }
        if TokenDecoder.duplicateKeyAnywhere(in: text) != nil {
            throw Refusal(kind: .invalid, description: "the body names a key more than once")
        }
        if let misplaced = LineItemFieldNames.notAllowed(inItem: Array(body.utf8)).first {
            throw Refusal(kind: .invalid, description: misplaced.description)
        }
        guard item.common.lineItemId == lineItemId else {
            throw Refusal(kind: .invalid, description: "the body's lineItemId is not \(lineItemId)")
        }
        // A restatement corrects a line item the token has. Another token's (of this app or another) went to
        // Apple as this token's too, and a new one as a sale nobody made: new items are posted
        // (`POST /v1/tokens/{id}/line-items`), where Apple's rules for a new item are checked.
        guard try ledger.reports.lineItems(for: externalPurchaseId).contains(where: { $0.lineItemId == lineItemId })
        else {
            throw Refusal(
                kind: .conflict,
                description: "the token has no line item \(lineItemId): a restatement corrects one of its own; post a "
                    + "new one with POST /v1/tokens/{externalPurchaseId}/line-items"
            )
        }
        // Apple holds a version (in a report it accepted): the new one changes it, which Apple takes only as a
        // restatement ("Reporting corrections"; without the flag it is a DuplicateValueError). Holding none, the
        // new one is the first Apple sees, never a restatement.
        var marked = ""
        let held = try heldVersion(of: lineItemId, on: externalPurchaseId) != nil
        if held != (item.common.restatement == true) {
            item.setRestatement(held)
            marked =
                held
                ? " (marked restatement: Apple holds an earlier version)" : " (not a restatement: Apple holds none)"
        }
        // The net follows from the amounts (`PurchaseNet`): set from what the token holds, so a body copied from
        // the attention list before other items changed is not refused for it.
        let operatorsNet = item.common.netAmountTaxExclusive
        if item.isBuy && !held {
            // Apple's first version of a buy: its refunds come after it (Apple: a new buy's net is its amount).
            item.setNet(item.common.amountTaxExclusive)
        } else {
            item.setNet(joining: try LineItemScreen(ledger: ledger).standing(on: externalPurchaseId))
        }
        if item.common.netAmountTaxExclusive != operatorsNet {
            marked += " (net set to \(item.common.netAmountTaxExclusive), from the amounts and the refunds that stand)"
        }
        try check(item, of: token)
        let replacement = try AppleRejection.encodeLineItem(item)
        let previous = try ledger.reports.lineItemVersions(lineItemId).last {
            $0.externalPurchaseId == externalPurchaseId
        }
        // The same as the version that stands (Apple holds it, or it waits to be sent): a new version would go to
        // Apple as another restatement under a new requestIdentifier, saying nothing new. Its fields compared here
        // (a provider's body is written otherwise), its bytes again where it is written (the same restatement sent
        // twice at once).
        let unchanged = Outcome(
            externalPurchaseId: externalPurchaseId,
            action: "restate",
            detail: "line item \(lineItemId) unchanged: it is the version that stands; nothing stored, nothing sent"
        )
        if let previous, !previous.isSetAside, LineItemChanges.changesNothing(from: previous.body, to: replacement) {
            return unchanged
        }
        guard
            let resolved = try ledger.reports.restateLineItem(
                lineItemId,
                of: externalPurchaseId,
                replacement: replacement,
                now: clock.nowMilliseconds()
            )
        else { return unchanged }
        return Outcome(
            externalPurchaseId: externalPurchaseId,
            action: "restate",
            detail: "line item \(lineItemId) stored for the next report\(marked); \(resolved) set-aside version(s) "
                + "resolved" + LineItemChanges.describe(from: previous?.body, to: replacement)
                + retakeSetAsideRefunds(on: token, of: PurchaseNet.buyId(of: item), besides: lineItemId)
                + (try releaseWaiting(behind: externalPurchaseId))
        )
    }

    /// Withdraws a line item. One Apple never accepted (set aside after its rejection) is dropped; one Apple holds is
    /// retracted (Apple's "Reporting corrections": same `lineItemId`, `restatement` and `erroneouslySubmitted` true,
    /// all original fields). Its `netAmountTaxExclusive` is recalculated without it (`PurchaseNet`): 0 for a buy, the
    /// buy less the refunds that still stand for a refund.
    package func retract(_ externalPurchaseId: ExternalPurchaseID, lineItemId: LineItemID) throws -> Outcome {
        let token = try token(externalPurchaseId)
        let versions = try ledger.reports.lineItems(for: externalPurchaseId).filter { $0.lineItemId == lineItemId }
        guard !versions.isEmpty else {
            throw Refusal(kind: .conflict, description: "the token has no line item \(lineItemId)")
        }
        let now = clock.nowMilliseconds()
        let latest = versions.last.flatMap { try? JSONDecoder().decode(LineItem.self, from: Data($0.body.utf8)) }
        let buy = latest.map(PurchaseNet.buyId(of:)) ?? lineItemId
        guard let retraction = try retraction(of: lineItemId, token: token) else {
            let dropped = try ledger.reports.correctLineItem(
                lineItemId,
                of: externalPurchaseId,
                replacement: nil,
                now: now
            )
            guard dropped > 0 else {
                // In a report Apple refused as a whole (its error named no line item): nothing was set aside, and
                // the report goes again only as the operator says.
                let sentIn = versions.last?.reportRequestIdentifier
                if let sentIn, try ledger.reports.report(sentIn)?.state == .rejected {
                    let token = externalPurchaseId.shellWord
                    throw Refusal(
                        kind: .conflict,
                        description: "line item \(lineItemId) is in a report Apple refused as a whole: restate the "
                            + "item (linkout report restate \(token) \(lineItemId.shellWord) FILE), send the report "
                            + "again once its cause is fixed (linkout report resend \(token)), or report the token "
                            + "NO_LINE_ITEM (linkout report no-line-item \(token))"
                    )
                }
                // Every version set aside and settled: a retraction a moment ago dropped it (said "still on its
                // way", though nothing of it was going anywhere).
                if versions.allSatisfy({ $0.correctedAt != nil }) {
                    throw Refusal(
                        kind: .conflict,
                        description: "line item \(lineItemId) was dropped already: Apple holds none of it"
                    )
                }
                throw Refusal(
                    kind: .conflict,
                    description: "line item \(lineItemId) is neither set aside nor held by Apple (still on its way)"
                )
            }
            // Its refunds go first (dropped with a buy), so a rejected report they emptied is settled too. A buy
            // with a version on its way to Apple (not set aside, not accepted yet) is not gone: Apple may accept
            // that one, and its refunds stay to be checked again.
            let onItsWay = versions.contains { !$0.isSetAside }
            let retaken = retakeSetAsideRefunds(
                on: token,
                of: buy,
                besides: lineItemId,
                buyDropped: buy == lineItemId && !onItsWay
            )
            let settled = try settleEmptiedRejection(of: externalPurchaseId, now: now)
            return Outcome(
                externalPurchaseId: externalPurchaseId,
                action: "retract",
                detail: (onItsWay
                    ? "the set-aside version(s) of line item \(lineItemId) dropped; the version on its way to Apple "
                        + "stands (retract it once Apple holds it)"
                    : "line item \(lineItemId) dropped: Apple never accepted it") + retaken + (settled ?? "")
                    + (try releaseWaiting(behind: externalPurchaseId))
            )
        }
        _ = try ledger.reports.correctLineItem(lineItemId, of: externalPurchaseId, replacement: retraction, now: now)
        return Outcome(
            externalPurchaseId: externalPurchaseId,
            action: "retract",
            detail: "retraction of line item \(lineItemId) queued for the next report"
                + retakeSetAsideRefunds(on: token, of: buy, besides: lineItemId)
        )
    }

    /// A refund set aside waits on its buy and the buy's other refunds (its buy not at Apple: `NotFoundError`;
    /// refunds beyond the buy). Once the operator restates or retracts the buy or one of its refunds (`settled`,
    /// whose buy is `buy`), each of the buy's refunds linkout set aside (`waitsOnItsBuy`) is checked again with its
    /// net from what the token then holds, and one Apple's rules now take goes with the next report (it stayed set
    /// aside until restated by hand); when the buy was dropped (Apple never held it), they are dropped with it: they
    /// can never be reported. Said in the outcome when there were any. The action itself is stored by then: a
    /// failure here is said, not thrown, so the answer never reports an action undone that was done.
    private func retakeSetAsideRefunds(
        on token: StoredToken,
        of buy: LineItemID,
        besides settled: LineItemID,
        buyDropped: Bool = false
    ) -> String {
        let externalPurchaseId = token.token.externalPurchaseId
        var taken: [String] = []
        var dropped: [String] = []
        do {
            var waiting: [(LineItemID, LineItem)] = []
            for stored in try ledger.reports.lineItems(for: externalPurchaseId)
            where stored.lineItemId != settled && stored.needsCorrection && Self.waitsOnItsBuy(stored) {
                guard let item = try? JSONDecoder().decode(LineItem.self, from: Data(stored.body.utf8)),
                    case .refund(let refund) = item, refund.referenceLineItemId == buy
                else { continue }
                waiting.removeAll { $0.0 == stored.lineItemId }
                waiting.append((stored.lineItemId, item))
            }
            for (id, stored) in waiting {
                let now = clock.nowMilliseconds()
                if buyDropped {
                    _ = try ledger.reports.correctLineItem(id, of: externalPurchaseId, replacement: nil, now: now)
                    dropped.append(id.rawValue)
                    continue
                }
                var refund = stored
                refund.setRestatement(try heldVersion(of: id, on: externalPurchaseId) != nil)
                refund.setNet(joining: try LineItemScreen(ledger: ledger).standing(on: externalPurchaseId))
                do { try check(refund, of: token) } catch is Refusal { continue }
                let body = try AppleRejection.encodeLineItem(refund)
                _ = try ledger.reports.correctLineItem(id, of: externalPurchaseId, replacement: body, now: now)
                taken.append(id.rawValue)
            }
        } catch {
            return "; the set-aside refunds of \(buy) were not checked again (\(error)): restate them"
        }
        var said = ""
        if !taken.isEmpty {
            said +=
                "; set-aside refund(s) \(taken.joined(separator: ", ")) checked again and stored for the next report"
        }
        if !dropped.isEmpty { said += "; set-aside refund(s) \(dropped.joined(separator: ", ")) dropped with it" }
        return said
    }

    /// Set aside by linkout, before Apple saw it (`LineItemScreen`) or with the item Apple refused (`AppleRejection`),
    /// so for what the token held then: one Apple refused for itself keeps waiting for the operator.
    private static func waitsOnItsBuy(_ stored: StoredLineItem) -> Bool {
        guard let note = stored.correction else { return false }
        return note.hasPrefix(LineItemScreen.notePrefix) || note.hasPrefix(AppleRejection.waitsForNotePrefix)
    }

    /// The provider's events that waited for the operator's correction of the token's items (a refund of a buy
    /// Apple set aside) are taken at the payment service's next pass, not after their hour's wait; said in the
    /// outcome when there were any.
    private func releaseWaiting(behind externalPurchaseId: ExternalPurchaseID) throws -> String {
        let released = try ledger.payments.releaseEventsWaiting(behind: externalPurchaseId)
        return released == 0 ? "" : "; \(released) payment event(s) waiting for it taken again"
    }

    /// The retraction of a line item Apple holds (the latest version in an accepted report), checked against
    /// Apple's rules; nil when Apple holds no version of it. Also made, without an operator, when a chargeback
    /// reported as a `REFUND` is reversed.
    package func retraction(of lineItemId: LineItemID, externalPurchaseId: ExternalPurchaseID) throws -> String? {
        try retraction(of: lineItemId, token: token(externalPurchaseId))
    }

    private func retraction(of lineItemId: LineItemID, token: StoredToken) throws -> String? {
        guard let held = try heldVersion(of: lineItemId, on: token.token.externalPurchaseId) else { return nil }
        var item = try JSONDecoder().decode(LineItem.self, from: Data(held.body.utf8))
        // The net without this item: the buy's less the refunds that still stand (`PurchaseNet`).
        let holds = try LineItemScreen(ledger: ledger).standing(on: token.token.externalPurchaseId)
        item.markRetracted()
        item.setNet(joining: holds)
        try check(item, of: token)
        return try AppleRejection.encodeLineItem(item)
    }

    /// A new version of `item` made without an operator (a late renewal changes the days of the ones after it),
    /// encoded: when Apple holds or is being sent a version (`VersionsAtApple`), a restatement (Apple: "Reporting
    /// corrections") whose net, for a buy, is what stands of it after its refunds; else the item as it is, Apple's
    /// first, net and all. The planner decides the flag again as it sends.
    func newVersion(_ item: LineItem, on externalPurchaseId: ExternalPurchaseID) throws -> String {
        let stored = try ledger.reports.lineItems(for: externalPurchaseId)
        let id = item.common.lineItemId
        let held = try VersionsAtApple(ledger: ledger).held(
            [id],
            among: stored.filter { !$0.isSetAside },
            on: externalPurchaseId
        )
        var version = item
        version.setRestatement(held.contains(id))
        // Refunds of it since lower its net (Apple: `IncorrectNetAmountError`).
        if held.contains(id) && version.isBuy { version.setNet(joining: LineItemScreen.standing(stored)) }
        return try AppleRejection.encodeLineItem(version)
    }

    /// The latest version of a line item Apple holds: one not set aside, in a report Apple accepted. Nil when Apple
    /// holds none.
    private func heldVersion(of lineItemId: LineItemID, on externalPurchaseId: ExternalPurchaseID) throws
        -> StoredLineItem?
    {
        let accepted = Set(
            try ledger.reports.reports(for: externalPurchaseId).filter { $0.state == .accepted }.map(
                \.requestIdentifier
            )
        )
        // A version set aside keeps the identifier of the report it left, which Apple may have accepted since.
        return try ledger.reports.lineItems(for: externalPurchaseId).last {
            $0.lineItemId == lineItemId && !$0.isSetAside && $0.reportRequestIdentifier.map(accepted.contains) == true
        }
    }

    /// A rejected report whose line items the operator dropped, every one, has nothing left to carry, and no action
    /// would take the token out of needs attention. When Apple holds no line items for the token, the report goes again
    /// as `NO_LINE_ITEM` under the same `requestIdentifier` (Apple: resubmit a failed report under its identifier,
    /// "Send External Purchase Report"), so the token is reported. Returns what was done, nil when something is left to
    /// carry (a version Apple never refused, one still waiting for a correction) or Apple holds line items for the
    /// token (`NO_LINE_ITEM` would be a status regression).
    private func settleEmptiedRejection(of externalPurchaseId: ExternalPurchaseID, now: Int64) throws -> String? {
        let reports = try ledger.reports.reports(for: externalPurchaseId)
        guard let rejected = reports.first(where: { $0.state == .rejected }),
            !reports.contains(where: {
                $0.state == .accepted && $0.status == .lineItem
            })
        else { return nil }
        let left = try ledger.reports.lineItems(for: externalPurchaseId).contains { item in
            item.needsCorrection
                || (!item.isSetAside && item.awaitingTokenSince == nil
                    && item.reportRequestIdentifier.map { $0 == rejected.requestIdentifier } ?? true)
        }
        guard !left else { return nil }
        try replaceWithNoLineItem(
            rejected,
            note: "withdrawn: the operator dropped every line item of the rejected report",
            now: now
        )
        return "; nothing is left to report, so the rejected report \(rejected.requestIdentifier) goes again as "
            + "NO_LINE_ITEM"
    }

    /// The rejected report's content becomes `NO_LINE_ITEM`, same `requestIdentifier`, due now.
    private func replaceWithNoLineItem(_ rejected: StoredReport, note: String, now: Int64) throws {
        let body = try AppleRejection.encode(
            ExternalPurchaseReport(
                requestIdentifier: rejected.requestIdentifier,
                externalPurchaseId: rejected.externalPurchaseId,
                status: .noLineItem
            )
        )
        guard
            try ledger.reports.replaceRejectedReport(
                rejected.requestIdentifier,
                status: .noLineItem,
                body: body,
                note: note,
                now: now
            )
        else { throw Refusal(kind: .conflict, description: "the rejected report changed meanwhile; try again") }
    }

    private func token(_ externalPurchaseId: ExternalPurchaseID) throws -> StoredToken {
        guard let token = try ledger.tokens.token(externalPurchaseId) else {
            throw Refusal(kind: .unknownToken, description: "no token \(externalPurchaseId) is recorded")
        }
        return token
    }

    /// Apple's rules for the item against what Apple holds for the token, before anything is stored.
    private func check(_ item: LineItem, of token: StoredToken) throws {
        let problems = try LineItemScreen(ledger: ledger).problems(item, on: token, now: clock.nowMilliseconds())
        guard problems.isEmpty else {
            throw Refusal(kind: .invalid, description: problems.map(\.description).joined(separator: "; "))
        }
    }
}

extension LineItem {
    /// Apple's retraction of this item (Apple: "Reporting corrections"): a restatement marked `erroneouslySubmitted`,
    /// every original field kept; its net is recalculated by the caller (`setNet`).
    mutating func markRetracted() {
        switch self {
        case .oneTimeBuy(var item):
            (item.restatement, item.erroneouslySubmitted) = (true, true)
            self = .oneTimeBuy(item)
        case .subscriptionBuy(var item):
            (item.restatement, item.erroneouslySubmitted) = (true, true)
            self = .subscriptionBuy(item)
        case .refund(var item):
            (item.restatement, item.erroneouslySubmitted) = (true, true)
            self = .refund(item)
        }
    }

    /// Marks a new version of an item Apple holds (Apple: "Reporting corrections": same `lineItemId`,
    /// `restatement`), or takes the mark off one Apple has never seen (the field left out).
    mutating func setRestatement(_ restatement: Bool) {
        let value: Bool? = restatement ? true : nil
        switch self {
        case .oneTimeBuy(var item):
            item.restatement = value
            self = .oneTimeBuy(item)
        case .subscriptionBuy(var item):
            item.restatement = value
            self = .subscriptionBuy(item)
        case .refund(var item):
            item.restatement = value
            self = .refund(item)
        }
    }

    /// Its net once it joins `holds` (what the token holds at Apple or will send): its buy's tax-exclusive amount
    /// less the refunds that then stand (`PurchaseNet`), never below 0.
    mutating func setNet(joining holds: [LineItem]) {
        setNet(max(0, PurchaseNet.ofBuy(PurchaseNet.buyId(of: self), in: holds + [self])))
    }

    mutating func setNet(_ net: Int64) {
        switch self {
        case .oneTimeBuy(var item):
            item.netAmountTaxExclusive = net
            self = .oneTimeBuy(item)
        case .subscriptionBuy(var item):
            item.netAmountTaxExclusive = net
            self = .subscriptionBuy(item)
        case .refund(var item):
            item.netAmountTaxExclusive = net
            self = .refund(item)
        }
    }
}
