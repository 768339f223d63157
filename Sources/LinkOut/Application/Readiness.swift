import HTTPServer
import Lifecycle
import Storage

/// `/readyz`: 200 when the ledger takes writes; 503 with the reason when it does not. Reporting's state is shown
/// but does not take the server out of rotation: visits must still be recorded while reports wait.
struct Readiness: Sendable {
    let ledger: Ledger
    let reporting: ReportingService
    let clock: Clock

    func response() -> HTTPResponse {
        var lines: [String] = []
        var ready = true
        do {
            try ledger.checkWritable(at: clock.nowMilliseconds())
            lines.append("database: writable")
        } catch {
            ready = false
            lines.append("database: not writable: \(error)")
        }
        lines.append("configuration: valid")
        if reporting.isAlive(now: clock.nowMilliseconds()) {
            lines.append("reporting: \(reporting.status.description)")
        } else {
            ready = false
            lines.append("reporting: the background service stopped answering")
        }
        return HTTPResponse(
            status: ready ? .ok : .serviceUnavailable,
            headers: ["Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store"],
            body: Array(((ready ? "ready\n" : "not ready\n") + lines.joined(separator: "\n") + "\n").utf8)
        )
    }
}
