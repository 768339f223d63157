import Domain
import ExternalPurchase
import Foundation
import Storage

/// Apple's rules for one line item, checked when the item is made from a provider's event, not only when its
/// report is planned: an item Apple would refuse (a refund more than a year after its buy,
/// `RefundNotAllowedCreationDateError`; an item dated outside its token's active range,
/// `LineItemCreationDateOutOfRangeError`; ...) is stored set aside with the rule's name and the action that
/// settles it, as Apple's `400` naming it would leave it. It shows in `linkout report attention`,
/// `/admin/reports`, the close and `linkout_reports_needing_attention`, and the token's other items and later
/// renewals are reported as usual. The planner checks again what reaches a report another way
/// (`ReportingService.setAsideRefused`).
struct LineItemScreen: Sendable {
    let ledger: Ledger

    /// `change` with the line items and later versions Apple would refuse moved to `setAside`. Held items are
    /// checked once placed on a token (they belong to none yet).
    func screened(_ change: PaymentChange, now: Int64) throws -> PaymentChange {
        var screened = change
        screened.lineItems = []
        screened.restatements = []
        for (item, isRestatement) in change.lineItems.map({ ($0, false) }) + change.restatements.map({ ($0, true) }) {
            let problems = try problems(item.body, on: item.externalPurchaseId, now: now)
            if problems.isEmpty || Self.waitsForItsDate(problems, body: item.body, now: now) {
                if isRestatement { screened.restatements.append(item) } else { screened.lineItems.append(item) }
            } else {
                screened.outcome += "; line item \(item.lineItemId) set aside: Apple would refuse it"
                screened.setAside.append(
                    (
                        item.externalPurchaseId, item.lineItemId, item.body,
                        Self.note(problems, externalPurchaseId: item.externalPurchaseId, lineItemId: item.lineItemId)
                    )
                )
            }
        }
        return screened
    }

    /// What Apple would find wrong with `body` sent on the token; none for a token the ledger does not know (the
    /// planner reports it as it can).
    func problems(_ body: String, on externalPurchaseId: ExternalPurchaseID, now: Int64) throws -> [ReportProblem] {
        guard let token = try ledger.tokens.token(externalPurchaseId) else { return [] }
        return try problems(JSONDecoder().decode(LineItem.self, from: Data(body.utf8)), on: token, now: now)
    }

    /// What Apple would find wrong with `item` sent on `token`, beside the items the token holds or will send.
    func problems(_ item: LineItem, on token: StoredToken, now: Int64) throws -> [ReportProblem] {
        ReportValidator(
            token: token.token,
            earlierLineItems: try standing(on: token.token.externalPurchaseId),
            now: now
        )
        .problems(
            in: ExternalPurchaseReport(
                requestIdentifier: RequestIdentifier(ReportPlanner.newIdentifier()),
                externalPurchaseId: token.token.externalPurchaseId,
                status: .lineItem,
                lineItems: [item]
            )
        )
    }

    /// The items the token holds at Apple or will send, in the order they came (those set aside are not at
    /// Apple): the earlier items every check of a new one is made against.
    func standing(on externalPurchaseId: ExternalPurchaseID) throws -> [LineItem] {
        Self.standing(try ledger.reports.lineItems(for: externalPurchaseId))
    }

    /// `stored` without the versions set aside, decoded. A stored body that no longer decodes is left out rather
    /// than failing every event of its token.
    static func standing(_ stored: [StoredLineItem]) -> [LineItem] {
        let decoder = JSONDecoder()
        return stored.filter { !$0.isSetAside }.compactMap {
            try? decoder.decode(LineItem.self, from: Data($0.body.utf8))
        }
    }

    /// Whether the item is dated ahead of this server's clock, by no more than `ReportingPolicy.futureDateWait`,
    /// and nothing else is wrong with it (`FutureDateError` at most): it is kept as any item and goes to Apple
    /// once its date has come (the planner's report carrying it waits until then), never set aside for a person.
    /// An item the validator's few minutes of grace let through waits too: Apple refuses any date in its future.
    static func waitsForItsDate(_ problems: [ReportProblem], creationDate: Int64, now: Int64) -> Bool {
        creationDate > now && creationDate <= now + ReportingPolicy.futureDateWait
            && problems.allSatisfy { $0.name == "FutureDateError" }
    }

    /// The same for a stored item's JSON.
    static func waitsForItsDate(_ problems: [ReportProblem], body: String, now: Int64) -> Bool {
        guard let item = try? JSONDecoder().decode(LineItem.self, from: Data(body.utf8)) else { return false }
        return waitsForItsDate(problems, creationDate: item.common.creationDate, now: now)
    }

    /// The note kept with an item set aside: each rule broken, then the action that settles it.
    static func note(_ problems: [ReportProblem], externalPurchaseId: ExternalPurchaseID, lineItemId: LineItemID)
        -> String
    {
        let rules = problems.map(\.description).joined(separator: "; ")
        let words = "\(externalPurchaseId.shellWord) \(lineItemId.shellWord)"
        let drop = "linkout report retract \(words)"
        let action: String
        if problems.contains(where: { $0.name == "RefundNotAllowedCreationDateError" }) {
            action =
                "Apple takes no refund more than a year after its buy, so it stays in your own books only: "
                + "drop the item (\(drop))"
        } else if problems.contains(where: { $0.name == "LineItemCreationDateOutOfRangeError" }) {
            action =
                "the item is dated outside its token's active range, and one that refers to an item on this "
                + "token (a refund) cannot go on another: drop it (\(drop)) and keep it in your own books"
        } else {
            action =
                "correct it (linkout report restate \(words) FILE) or drop it (\(drop))"
        }
        return notePrefix + ": \(rules). Action: \(action)"
    }

    /// How the note of an item this screen set aside begins (Apple's own refusals keep Apple's words).
    static let notePrefix = "set aside before sending, Apple would refuse it"
}
