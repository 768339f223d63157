package import Domain
import Payments
package import Storage

/// Builds the close of a month from the ledger: counts by state, totals, and the outstanding tokens and line
/// items with the reason and the action that would settle each (the words of `linkout report`).
package struct MonthlyClose: Sendable {
    let ledger: Ledger
    let configuration: Configuration
    let totals: MoneyTotals

    package init(ledger: Ledger, configuration: Configuration) {
        self.ledger = ledger
        self.configuration = configuration
        totals = MoneyTotals(ledger: ledger, regimes: configuration.commission.regimes)
    }

    /// How many entries a report lists at most by default; the rest are counted.
    package static let defaultListLimit = 100

    package func deadline(of month: CloseMonth) -> Int64 { month.deadline(day: configuration.close.deadlineDay) }

    /// Now, as the reporting planner sees it: a token whose `NO_LINE_ITEM` waits for a payment under way is
    /// `payment_open`, not `unreported` (which a pass would plan at once).
    func moment(_ now: Int64) -> CloseStore.Moment {
        .init(
            now: now,
            quietSince: now - configuration.reporting.noLineItemAfterSeconds * 1000,
            paymentsUnderWay: ReportPlanner.paymentsUnderWay(
                now: now,
                sessionLifetime: configuration.payments.registration.sessionLifetime
            ),
            holdsEndForTokensCreatedBefore: now - ReportPlanner.holdsEndAfterMilliseconds
        )
    }

    /// The month's counts: its tokens, its line items, and its payment events not made into line items yet.
    package struct Counts: Sendable {
        package var tokens: CloseCounts
        package var lineItems: CloseCounts
        package var pendingPaymentEvents: Int64
    }

    /// Just the counts (no totals, no list): what the periodic pass needs for its warning and gauge.
    package func counts(month: CloseMonth, environment: Environment, now: Int64) throws(StorageError) -> Counts {
        let close = ledger.monthlyClose
        return Counts(
            tokens: try close.tokenCounts(
                environment: environment,
                from: month.start,
                until: month.end,
                at: moment(now)
            ),
            lineItems: try close.lineItemCounts(environment: environment, from: month.start, until: month.end),
            pendingPaymentEvents: try close.pendingPaymentEventCount(
                environment: environment,
                from: month.start,
                until: month.end
            )
        )
    }

    /// What keeps the month from closing: everything outstanding but the tokens not due yet, and the payment
    /// events whose line items are not made yet.
    package static func blocking(_ counts: Counts) -> Int64 {
        counts.tokens.outstandingTotal - (counts.tokens.outstanding[.notDue] ?? 0) + counts.lineItems.outstandingTotal
            + counts.pendingPaymentEvents
    }

    /// The full report. `status`: reporting's state, which turns due work into `blocked` while Apple refuses us
    /// or no credentials are configured. It only reads: line items written since the last close pass count once
    /// `LineItemDating` has dated them.
    package func report(
        month: CloseMonth,
        environment: Environment = .production,
        now: Int64,
        status: ReportingService.Status,
        listLimit: Int = defaultListLimit,
        includeTotals: Bool = true
    ) throws -> CloseReport {
        let close = ledger.monthlyClose
        var tally = try counts(month: month, environment: environment, now: now)
        let blocked = status.holdsBack(environment)
        if blocked {
            tally.tokens = Self.blocked(tally.tokens)
            tally.lineItems = Self.blocked(tally.lineItems)
        }
        let outstanding = Self.blocking(tally)
        // Tokens first (oldest first), then line items, then payment events, up to the list's limit.
        let (from, until) = (month.start, month.end)
        let listings: [(Int) throws -> [CloseItem]] = [
            {
                try close.outstandingTokens(
                    environment: environment,
                    from: from,
                    until: until,
                    at: moment(now),
                    limit: $0
                )
            },
            { try close.outstandingLineItems(environment: environment, from: from, until: until, limit: $0) },
            { try close.pendingPaymentEvents(environment: environment, from: from, until: until, limit: $0) },
        ]
        var items: [CloseItem] = []
        for listing in listings where items.count < listLimit { items += try listing(listLimit - items.count) }
        let deadline = deadline(of: month)
        let explain = CloseExplanation(ledger: ledger, configuration: configuration, status: status)
        let entries = try items.map { item in
            var item = item
            if blocked && CloseExplanation.blockable.contains(item.state) { item.state = .blocked }
            return try explain.entry(item)
        }
        return CloseReport(
            month: month.description,
            environment: environment.rawValue,
            state: CloseReport.state(month: month, deadline: deadline, outstanding: outstanding, now: now),
            monthStart: CloseReport.timestamp(month.start),
            monthEnd: CloseReport.timestamp(month.end),
            deadline: CloseReport.timestamp(deadline),
            secondsToDeadline: (deadline - now) / 1000,
            tokens: .init(tally.tokens),
            lineItems: .init(tally.lineItems),
            pendingPaymentEvents: tally.pendingPaymentEvents,
            outstanding: outstanding,
            totals: includeTotals ? try totals.totals(month: month, environment: environment) : nil,
            outstandingList: entries,
            outstandingNotListed: tally.tokens.outstandingTotal + tally.lineItems.outstandingTotal
                + tally.pendingPaymentEvents - Int64(entries.count)
        )
    }

    /// Due work counted as blocked while reporting cannot send.
    private static func blocked(_ counts: CloseCounts) -> CloseCounts {
        var counts = counts
        for state in CloseExplanation.blockable {
            if let count = counts.outstanding.removeValue(forKey: state) {
                counts.outstanding[.blocked, default: 0] += count
            }
        }
        return counts
    }
}
