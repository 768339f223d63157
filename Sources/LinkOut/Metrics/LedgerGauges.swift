import Lifecycle
import Storage

/// Whether the ledger takes writes and the reporting service is alive, from what the process already knows (the
/// last write's failure, the reporting heartbeat): no read or probe at scrape time. The alert rules in
/// `deploy/prometheus/alerts.yml` use them for "disk or database unavailable" and "reporting stopped".
enum LedgerGauges {
    static func sample(ledger: Ledger, reporting: ReportingService, clock: Clock) -> [Metrics.Gauge] {
        let failure = ledger.writeFailure
        let backlog = ledger.ingestionBacklog
        let now = clock.nowMilliseconds()
        return [
            Metrics.Gauge(
                name: "linkout_ledger_writable",
                help: "0 while writes to the ledger fail (journal appends or the tables); visits are refused then.",
                value: failure == nil ? 1 : 0
            ),
            Metrics.Gauge(
                name: "linkout_ledger_disk_full",
                help: "1 while the ledger's disk is full.",
                value: failure?.code == .diskFull ? 1 : 0
            ),
            Metrics.Gauge(
                name: "linkout_ledger_damaged",
                help: "1 once SQLite found the ledger's file damaged (malformed); restore a backup.",
                value: ledger.damage == nil ? 0 : 1
            ),
            Metrics.Gauge(
                name: "linkout_journal_backlog_visits",
                help: "Visits acknowledged from the journal and not yet in the tables (SQLite; 0 on PostgreSQL).",
                value: backlog.visits
            ),
            Metrics.Gauge(
                name: "linkout_journal_backlog_age_seconds",
                help: "How long the oldest visit not yet in the tables has waited (0 when none waits).",
                value: backlog.ageSeconds(now: now)
            ),
            Metrics.Gauge(
                name: "linkout_reporting_alive",
                help: "0 when the reporting service stopped answering (no pass within its allowance).",
                value: reporting.isAlive(now: now) ? 1 : 0
            ),
        ]
    }
}
