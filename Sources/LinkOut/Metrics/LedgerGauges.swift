import Lifecycle
import Storage

/// Whether the ledger takes writes and the reporting service is alive, from what the process already knows (the
/// last write's failure, the reporting heartbeat): no read or probe at scrape time. The alert rules in
/// `deploy/prometheus/alerts.yml` use them for "disk or database unavailable" and "reporting stopped".
enum LedgerGauges {
    static func sample(ledger: Ledger, reporting: ReportingService, clock: Clock) -> [Metrics.Gauge] {
        let failure = ledger.writeFailure
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
                name: "linkout_reporting_alive",
                help: "0 when the reporting service stopped answering (no pass within its allowance).",
                value: reporting.isAlive(now: clock.nowMilliseconds()) ? 1 : 0
            ),
        ]
    }
}
