import Domain
package import ExternalPurchase
import Foundation
package import Storage

/// What a `400` Apple stands by means for one report, decided from what its `SendReportErrorResponse` carries (Apple:
/// "SendReportErrorResponse", "Error messages and codes"): Apple does not publish the numeric `errorCode` values, so
/// the decision rests on the fields an error names (`fieldName`, `lineItemId`) and on the report itself, and the whole
/// body is kept.
package enum AppleRejection: Sendable, Equatable {
    /// Every error names a line item the report carries: those are set aside with Apple's message, and the rest goes
    /// again under the same `requestIdentifier` (Apple: "resubmit the full report using the same requestIdentifier",
    /// "Send External Purchase Report"). `rest` is nil when nothing is left to send.
    case setAside([String: String], rest: ExternalPurchaseReport?)
    /// `DUPLICATE_TOKEN` refused for the token's type (`DuplicateTokenStatusNotAllowedError`, "Error messages and
    /// codes"): the token is reported `NO_LINE_ITEM` instead, under the same `requestIdentifier`.
    case reportNoLineItem(ExternalPurchaseReport)
    /// No error names a field or a line item: Apple's `SimultaneousSubmissionError` carries only a code and a
    /// message. Another submission touching the same data was in flight; the same bytes go again later.
    case retryLater
    /// Anything else: only a person can fix it. The token is listed as needing attention with Apple's message.
    case needsAttention(String)

    /// A simultaneous-submission answer is retried this many times at most; after that a person looks, so a
    /// report Apple keeps refusing is never retried silently for good.
    static let simultaneousRetries: Int64 = 8

    /// How the note of a refund set aside with the item Apple refused begins (`classify`).
    static let waitsForNotePrefix = "waits for"

    package static func classify(body: String, report: StoredReport) -> AppleRejection {
        guard let response = SendReportErrorResponse.parse(body) else {
            return .needsAttention("Apple answered 400 without errors (a malformed request): \(body.prefix(300))")
        }
        let summary = response.errors.map(\.summary).joined(separator: "; ")
        guard let sent = try? JSONDecoder().decode(ExternalPurchaseReport.self, from: Data(report.body.utf8)) else {
            return .needsAttention(summary)
        }
        // Only Apple's own error says DUPLICATE_TOKEN is not allowed for the token: another error on `status`
        // (`LineItemStatusRegressionError`) is not fixed by NO_LINE_ITEM, and goes to a person.
        if sent.status == .duplicateToken && response.errors.contains(where: refusesDuplicateTokenStatus) {
            var replacement = sent
            replacement.status = .noLineItem
            replacement.lineItems = nil
            return .reportNoLineItem(replacement)
        }
        if response.errors.allSatisfy({ $0.fieldName == nil && $0.lineItemId == nil }) {
            return report.attempts + 1 < simultaneousRetries
                ? .retryLater
                : .needsAttention("refused \(report.attempts + 1) times: \(summary)")
        }
        let carried = Set((sent.lineItems ?? []).map(\.common.lineItemId))
        let named = response.errors.compactMap(\.lineItemId)
        guard named.count == response.errors.count, Set(named).isSubset(of: carried) else {
            return .needsAttention(summary)
        }
        var messages: [String: String] = [:]
        for error in response.errors {
            guard let id = error.lineItemId else { continue }
            messages[id.rawValue] = messages[id.rawValue].map { $0 + "; " + error.summary } ?? error.summary
        }
        // A refund of an item Apple refused here refers to a version Apple does not hold (`NotFoundError`) or nets
        // against one it refused (`IncorrectNetAmountError`): it waits with that item, and is taken again once the
        // operator restates or retracts it (`ReportActions`).
        // So does one after a refund of the same buy Apple refused here: its net counts that refund, which Apple
        // does not hold (sent again as it was, Apple refused it for the same net, and it waited for a person).
        var refusedRefund: [LineItemID: LineItemID] = [:]
        for item in sent.lineItems ?? [] {
            guard case .refund(let refund) = item else { continue }
            let buy = refund.referenceLineItemId
            if messages[item.common.lineItemId.rawValue] != nil {
                refusedRefund[buy] = refusedRefund[buy] ?? item.common.lineItemId
                continue
            }
            let waitsFor = messages[buy.rawValue] != nil ? buy : refusedRefund[buy]
            guard let waitsFor else { continue }
            messages[item.common.lineItemId.rawValue] =
                waitsForNotePrefix + " \(waitsFor), which Apple refused in the same report: checked "
                + "again once that item is restated or retracted (dropped with it when Apple never held it)"
        }
        let remaining = (sent.lineItems ?? []).filter { messages[$0.common.lineItemId.rawValue] == nil }
        guard !remaining.isEmpty else { return .setAside(messages, rest: nil) }
        var rest = sent
        rest.lineItems = remaining
        return .setAside(messages, rest: rest)
    }

    /// Apple's "duplicate request" ("Send External Purchase Report", its `400`): a report it already holds under this
    /// `requestIdentifier`. Settled with Retrieve External Purchase Report, as for a lost `200`. A body that is not a
    /// `SendReportErrorResponse` may be one too, so it is checked the same way.
    static func mayBeDuplicateRequest(_ body: String) -> Bool {
        guard let response = SendReportErrorResponse.parse(body) else { return true }
        return response.errors.contains { error in
            error.fieldName == "requestIdentifier" || mentions(error, "duplicate request")
                || mentions(error, "DuplicateRequest")
        }
    }

    /// Apple's `DuplicateTokenStatusNotAllowedError`. Its message text is not published: on a `DUPLICATE_TOKEN`
    /// report, an error that names it, or any error on `status` (a message in other words reached a person where
    /// NO_LINE_ITEM was due), is taken for it. A status regression is never it, whatever it names: one that says
    /// so, or that names the `LINE_ITEM` Apple holds (NO_LINE_ITEM would regress as well).
    private static func refusesDuplicateTokenStatus(_ error: SendReportErrorResponse.Failure) -> Bool {
        if mentions(error, "DuplicateTokenStatus") { return true }
        return error.fieldName == "status" && !mentions(error, "regress") && !mentions(error, "LINE_ITEM")
    }

    private static func mentions(_ error: SendReportErrorResponse.Failure, _ text: String) -> Bool {
        error.errorMessage?.range(of: text, options: .caseInsensitive) != nil
    }

    /// The report body as the outbox stores it: the bytes every retry sends.
    static func encode(_ report: ExternalPurchaseReport) throws -> String {
        try AppleJSON.text(report)
    }

    /// A line item as the ledger stores it.
    static func encodeLineItem(_ item: LineItem) throws -> String {
        try AppleJSON.text(item)
    }
}
