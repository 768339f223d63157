import Domain
import Lifecycle
import Logging
import Storage

/// The outbox as gauges: reports by state, the age of the oldest token Apple has not accepted a report for, the
/// line items held for want of an active token or of an exchange rate, and whether reports are being sent or
/// blocked.
enum ReportGauges {
    static func sample(ledger: Ledger, reporting: ReportingService, clock: Clock, logger: Logger) -> [Metrics.Gauge] {
        // A read that fails leaves its gauges out of this scrape (missing, never a made-up zero) and says why in
        // the log; the gauges that need no read still answer.
        func read<T>(_ gauge: String, _ body: () throws(StorageError) -> T) -> T? {
            do {
                return try body()
            } catch {
                logger.error("metrics could not read the ledger", ["gauge": gauge, "error": "\(error)"])
                return nil
            }
        }
        var gauges: [Metrics.Gauge] = []
        if let summary = read("linkout_reports", { () throws(StorageError) in try ledger.reports.reportSummary() }) {
            gauges += ReportState.allCases.map { state in
                Metrics.Gauge(
                    name: "linkout_reports_\(state.rawValue)",
                    help: "Reports in the outbox in state \(state.rawValue).",
                    value: Int(summary.counts[state] ?? 0)
                )
            }
            let now = clock.nowMilliseconds()
            let age = summary.oldestUnreported.map { max(0, (now - $0) / 1000) } ?? 0
            gauges.append(
                Metrics.Gauge(
                    name: "linkout_oldest_unreported_token_age_seconds",
                    help: "Time since linkout first saw the oldest token without an accepted report.",
                    value: Int(age)
                )
            )
            // Apple's notice comes 10 days after a token's creation (a custom-link token's at its expiry), however
            // recently linkout saw it: a token forwarded late arrives already close to it, or past it.
            if let notice = summary.firstUnreportedNotice {
                gauges.append(
                    Metrics.Gauge(
                        name: "linkout_unreported_notice_seconds",
                        help: "Seconds until Apple's UNREPORTED notice for the token without an accepted report whose "
                            + "notice comes first; negative once it is past.",
                        value: Int(clamping: Int64.saturating(notice, minus: now) / 1000)
                    )
                )
            }
        }
        if let held = read(
            "linkout_line_items_held",
            { () throws(StorageError) in
                try ledger.reports.lineItemsAwaitingTokenCount()
            }
        ) {
            gauges.append(
                Metrics.Gauge(
                    name: "linkout_line_items_held",
                    help: "Line items no token of the customer active at their date can carry yet.",
                    value: Int(held)
                )
            )
        }
        if let waiting = read(
            "linkout_line_items_waiting_for_rate",
            { () throws(StorageError) in
                try ledger.payments.heldPaymentEvents(limit: 100_000).count
            }
        ) {
            gauges.append(
                Metrics.Gauge(
                    name: "linkout_line_items_waiting_for_rate",
                    help: "Sales whose Apple line item waits for an exchange rate within 48 hours of the sale.",
                    value: waiting
                )
            )
        }
        // Tokens a person must act on: a report Apple rejected for a reason linkout cannot fix itself, or line
        // items set aside with Apple's message. Alert on anything above 0.
        if let attention = read(
            "linkout_reports_needing_attention",
            { () throws(StorageError) in
                try ledger.reports.attentionCount()
            }
        ) {
            gauges.append(
                Metrics.Gauge(
                    name: "linkout_reports_needing_attention",
                    help:
                        "Tokens whose report Apple rejected, or whose line items it refused, waiting for an operator.",
                    value: Int(attention)
                )
            )
        }
        return gauges + reportingGauges(reporting, now: clock.nowMilliseconds())
    }

    /// Whether reports are being sent, and why not while Apple refuses them.
    private static func reportingGauges(_ reporting: ReportingService, now: Int64) -> [Metrics.Gauge] {
        var gauges = [
            Metrics.Gauge(
                name: "linkout_reporting_running",
                help: "1 while reports are being sent to Apple.",
                value: reporting.status.sendsAtAll ? 1 : 0
            )
        ]
        // Apple's 429 pauses all sending until a moment it names (capped at an hour): when, so a pause is seen.
        gauges.append(
            Metrics.Gauge(
                name: "linkout_reporting_paused_until_seconds",
                help: "While Apple's 429 holds sending back, when it resumes (UNIX seconds); 0 otherwise.",
                value: Int((reporting.rateLimitedUntil(now: now) ?? 0) / 1000)
            )
        )
        // 1 while Apple refuses us for this reason (401, an undocumented 3xx or 4xx, a key that cannot sign): reports
        // wait and one is tried every few minutes. Alert on any 1.
        let blocked = Set(reporting.status.blocks.map(\.reason))
        for reason in ReportingBlock.Reason.allCases {
            gauges.append(
                Metrics.Gauge(
                    name: "linkout_reporting_blocked",
                    help: "1 while Apple refuses our reports for this reason; one is tried every 5 minutes.",
                    value: blocked.contains(reason) ? 1 : 0,
                    labels: [("reason", reason.rawValue)]
                )
            )
        }
        return gauges
    }
}
