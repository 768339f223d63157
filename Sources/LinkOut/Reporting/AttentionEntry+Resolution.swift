import Domain
import ExternalPurchase
import Foundation
import Storage

extension AttentionEntry {
    /// Apple's notice for an unreported token (Apple: "External Purchase Server API", "subtype"): 10 days after
    /// creation, or, for a custom-link token, soon after it expires. The time left before it is what makes a token
    /// urgent.
    package var noticeAt: Int64 {
        // Saturating: a token from Apple's notification is taken with the dates it carries, whatever they are.
        tokenExpirationDate ?? Int64.saturating(tokenCreationDate, plus: ReportingPolicy.unreportedNoticeMilliseconds)
    }

    /// What Apple said: the rejected report's `errors` (which name any line items set aside with it), or else
    /// the message kept with each line item set aside.
    package var appleMessage: String {
        if let report, let body = report.lastResponse {
            let errors = SendReportErrorResponse.parse(body)?.errors.map(\.summary) ?? []
            if !errors.isEmpty { return errors.joined(separator: "; ") }
            // An empty body, or `{}`, read as "Apple: " with nothing after it.
            let status = report.lastHTTPStatus.map { "HTTP \($0)" } ?? "an answer"
            let shown = body.trimmingCharacters(in: .whitespacesAndNewlines)
            return "\(status) naming no error, "
                + (shown.isEmpty ? "with an empty body" : "with the body \(shown.prefix(300))")
        }
        return lineItems.map { "line item \($0.lineItemId): \($0.correction ?? "")" }.joined(separator: "; ")
    }

    /// What waits behind it, when anything does: a restatement lets those events follow as line items; a
    /// retraction leaves a refund nothing Apple holds to refer to, so it is recorded and not reported.
    package var waiting: String? {
        guard waitingPaymentEvents > 0 else { return nil }
        return "\(waitingPaymentEvents) payment event(s) of this token (a refund, a renewal) wait behind it: a "
            + "restatement reports them after it, a retraction leaves a refund of it unreported"
    }

    /// A retraction of an item Apple holds an earlier version of withdraws that version too: an operator who
    /// meant to drop a refused restatement took a paid sale out of Apple's totals. Said wherever Apple holds line
    /// items of the token.
    static let retractionWithdrawsWhatAppleHolds =
        " (where Apple holds an earlier version of the item, a retraction withdraws that too, its net then 0: to "
        + "drop only a refused restatement, restate the item with the values Apple holds, which goes to Apple as a "
        + "restatement of the same values)"

    /// The action that resolves it, as the command that does it (the admin API has the same under
    /// `POST /admin/tokens/{id}/…`).
    package var resolution: String {
        let id = externalPurchaseId.shellWord
        // NO_LINE_ITEM is no answer once Apple holds line items of the token (`LineItemStatusRegressionError`).
        let noLineItem = appleHoldsLineItems ? nil : "linkout report no-line-item \(id)"
        if let item = lineItems.first {
            let more = lineItems.count > 1 ? " (and \(lineItems.count - 1) more)" : ""
            return "linkout report restate \(id) \(item.lineItemId.shellWord) FILE, or linkout report retract \(id) "
                + "\(item.lineItemId.shellWord)\(more)"
                + (appleHoldsLineItems ? Self.retractionWithdrawsWhatAppleHolds : "")
                + (report != nil ? noLineItem.map { "; or \($0)" } ?? "" : "")
        }
        if report?.status == .lineItem {
            return "correct the line item (linkout report restate \(id) LINE_ITEM_ID FILE) or, once the cause is "
                + "fixed, linkout report resend \(id)"
        }
        return (noLineItem.map { "\($0), or, " } ?? "") + "once the cause is fixed, linkout report resend \(id)"
    }
}
