import HTTPServer
import Lifecycle
import Storage

/// `/readyz`: 200 when the ledger takes writes; 503 with the reason when it does not. Reporting's state is shown
/// but does not take the server out of rotation: visits must still be recorded while reports wait.
struct Readiness: Sendable {
    let ledger: Ledger
    let reporting: ReportingService
    let clock: Clock
    /// The monthly close's watch: a month near or past its deadline is a line here, never a reason to be unready.
    var close: CloseMonitor? = nil

    func response() -> HTTPResponse {
        var lines: [String] = []
        var ready = true
        // The ledger's own record of failed writes first: a full disk refuses journal appends (every landing)
        // while a small probe into SQLite may still fit, and the probe would only fail again if it does not.
        // An unreachable database server is probed again instead: it may be back.
        // A full disk whose space is back clears here: an unready server gets no landings that would clear it.
        ledger.recheckWriteFailure()
        if let failure = ledger.writeFailure, failure.code != .unavailable {
            ready = false
            lines.append(
                failure.code == .diskFull
                    ? "database: disk full: visits are refused until space is freed (\(failure))"
                    : "database: writes failing: \(failure)"
            )
        } else {
            do {
                try ledger.checkWritable(at: clock.nowMilliseconds())
                lines.append("database: writable")
            } catch {
                ready = false
                let line =
                    switch error.code {
                    case .diskFull: "database: disk full: visits are refused until space is freed (\(error))"
                    case .unavailable: "database: unavailable: visits are refused until it is back (\(error))"
                    default: "database: not writable: \(error)"
                    }
                lines.append(line)
            }
        }
        // Damage does not take the server out of rotation: visits are still journaled and answered, and reads of
        // what is whole still work. It is said until the file is replaced.
        if let damage = ledger.damage {
            lines.append(
                "database: DAMAGED: SQLite found the ledger's file malformed (\(damage)): back up what can be "
                    + "read and restore the last good backup (README \"Backup and restore\")"
            )
        }
        lines.append("configuration: valid")
        // A backlog is not a reason to leave rotation: its landings are on disk and answered; it says how far
        // the tables are behind them.
        let backlog = ledger.ingestionBacklog
        if backlog.visits > 0 {
            lines.append(
                "journal: \(backlog.visits) visits not yet in the tables, the oldest waiting "
                    + "\(backlog.ageSeconds(now: clock.nowMilliseconds())) s"
            )
        }
        if reporting.isAlive(now: clock.nowMilliseconds()) {
            // One line per blocked app.
            let blocks = reporting.status.blocks
            lines +=
                blocks.isEmpty
                ? ["reporting: \(reporting.status.description)"] : blocks.map { "reporting: \($0.description)" }
            if let until = reporting.rateLimitedUntil(now: clock.nowMilliseconds()) {
                lines.append(
                    "reporting: Apple rate-limited sending (429); it resumes at \(ReportingBlock.timestamp(until))"
                )
            }
        } else {
            ready = false
            lines.append("reporting: the background service stopped answering")
        }
        lines += close?.readinessLines(now: clock.nowMilliseconds()) ?? []
        return HTTPResponse(
            status: ready ? .ok : .serviceUnavailable,
            headers: ["Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store"],
            body: Array(((ready ? "ready\n" : "not ready\n") + lines.joined(separator: "\n") + "\n").utf8)
        )
    }
}
