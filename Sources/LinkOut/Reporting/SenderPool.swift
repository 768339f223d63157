import Dispatch
import ExternalPurchase
import Lifecycle
import Logging
import Storage
import Synchronization

/// The senders of one reporting pass: `reporting.concurrency` threads taking due reports from the outbox
/// while the pass goes on planning, so one slow or hanging call to Apple holds one report, not all of them.
/// One report per token is in the outbox at a time (`enqueueReport`), so one is in flight per token (Apple:
/// `SimultaneousSubmissionError`); no report is sent twice in a pass.
final class SenderPool: Sendable {
    private struct Work {
        var buffer: [StoredReport] = []
        /// Reports sent (or being sent) in this pass.
        var taken: Set<String> = []
        /// Taken reports that may still be pending: in flight, or answered with a retry for later.
        var unsettled = 0
        var planningDone = false
        /// Apple answered the pass's first report, or the probe wait is over.
        var probed = false
    }

    private enum Next {
        case report(StoredReport)
        case wait
        case done
    }

    let service: ReportingService
    let client: ExternalPurchaseAPIClient
    let now: Int64
    private let work = Mutex(Work())
    private let more = DispatchSemaphore(value: 0)
    private let threads = Mutex<[BackgroundThread]>([])
    private let started = ContinuousClock.now

    /// A pass opens with one report: when Apple refuses us all (401, 403, a key that cannot sign), it does so
    /// once, not once per sender. The others join when that answer is in, or after this long (a hanging first
    /// call must not hold the pass).
    static let probeWait = Duration.milliseconds(500)

    init(service: ReportingService, client: ExternalPurchaseAPIClient, now: Int64) {
        self.service = service
        self.client = client
        self.now = now
    }

    func start(threads count: Int) {
        let started = (0..<max(1, count)).map { index in
            BackgroundThread(name: "linkout-report-\(index)") { [self] in run() }
        }
        threads.withLock { $0 = started }
    }

    /// New reports are in the outbox: idle senders look again.
    func moreQueued() {
        for _ in 0..<threads.withLock({ $0.count }) { more.signal() }
    }

    /// Planning is over: senders stop once nothing more is due. Returns when every send has its answer.
    func finish() {
        work.withLock { $0.planningDone = true }
        moreQueued()
        for thread in threads.withLock({ $0 }) { thread.join() }
    }

    private func run() {
        while service.maySend(now: now) {
            switch next() {
            case .report(let report):
                let settled = service.send(report, client: client)
                let first = work.withLock { work in
                    if settled { work.unsettled -= 1 }
                    defer { work.probed = true }
                    return !work.probed
                }
                if first { moreQueued() }
            case .wait:
                _ = more.wait(timeout: .now() + .milliseconds(50))
            case .done:
                return
            }
        }
    }

    private func next() -> Next {
        work.withLock { work in
            if !work.probed && !work.taken.isEmpty {
                guard ContinuousClock.now - started >= Self.probeWait else { return .wait }
                work.probed = true
            }
            if work.buffer.isEmpty {
                let planningDone = work.planningDone
                let due: [StoredReport]
                do {
                    // Reports still pending from this pass come back from the query; ask for enough beyond them.
                    due = try service.ledger.dueReports(
                        now: now,
                        limit: ReportingService.batchLimit + work.unsettled
                    )
                } catch {
                    service.logger.error("due reports could not be read", ["error": "\(error)"])
                    return .done
                }
                work.buffer = due.filter { !work.taken.contains($0.requestIdentifier) }.reversed()
                if work.buffer.isEmpty { return planningDone ? .done : .wait }
            }
            guard let report = work.buffer.popLast() else { return .wait }
            work.taken.insert(report.requestIdentifier)
            work.unsettled += 1
            return .report(report)
        }
    }
}
