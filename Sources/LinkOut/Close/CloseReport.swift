package import Domain
import Foundation
import Storage

/// The close of one month, as `linkout close`, `GET /admin/close` and the dashboard show it.
package struct CloseReport: Sendable, Encodable {
    /// *open*: the month is not over; *closing*: over, with tokens or line items Apple has not accepted;
    /// *closed*: every one accepted; *late*: still outstanding at the deadline.
    package enum State: String, Sendable, Encodable {
        case open, closing, closed, late
    }

    package struct Counts: Sendable, Encodable, Equatable {
        package var total: Int64
        package var accepted: Int64
        /// Not accepted, in every state (`notDue` included).
        package var outstanding: Int64
        /// Of those, active custom-link tokens Apple does not expect yet: they do not keep the month open.
        package var notDue: Int64
        package var byState: [String: Int64]

        init(_ counts: CloseCounts) {
            total = counts.total
            accepted = counts.accepted
            outstanding = counts.outstandingTotal
            notDue = counts.outstanding[.notDue] ?? 0
            byState = Dictionary(uniqueKeysWithValues: counts.outstanding.map { ($0.key.rawValue, $0.value) })
        }
    }

    /// A token or line item Apple has not accepted, or a payment event not made into line items: why, and what
    /// would settle it. Never the raw token.
    package struct Entry: Sendable, Encodable, Equatable {
        package var kind: String
        package var externalPurchaseId: ExternalPurchaseID
        package var lineItemId: LineItemID?
        /// The token's `tokenCreationDate`, the line item's `creationDate` or the payment event's time, ISO 8601
        /// UTC.
        package var date: String
        package var state: String
        package var reason: String
        package var action: String
    }

    package var month: String
    package var environment: String
    package var state: State
    /// The month's first instant and the first instant after it, ISO 8601 UTC.
    package var monthStart: String
    package var monthEnd: String
    /// 00:00 UTC on `close.deadlineDay` of the next month.
    package var deadline: String
    /// Seconds from now to the deadline; negative once it passed.
    package var secondsToDeadline: Int64
    package var tokens: Counts
    package var lineItems: Counts
    /// Payment events of the month not made into line items yet: the month's line items are not all there.
    package var pendingPaymentEvents: Int64
    /// Tokens, line items and payment events that keep the month from closing (outstanding, less the tokens not
    /// due).
    package var outstanding: Int64
    package var totals: CloseTotals?
    /// The first outstanding tokens (oldest first), then line items, then payment events, at most the list's
    /// limit.
    package var outstandingList: [Entry]
    /// Outstanding tokens, line items and payment events not in `outstandingList`.
    package var outstandingNotListed: Int64

    /// The state of a month with `outstanding` unsettled items at `now`.
    package static func state(month: CloseMonth, deadline: Int64, outstanding: Int64, now: Int64) -> State {
        if now < month.end { return .open }
        if outstanding == 0 { return .closed }
        return now >= deadline ? .late : .closing
    }

    static func timestamp(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(milliseconds / 1000)))
    }
}
