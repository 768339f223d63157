import ExternalPurchase
import Lifecycle
import Logging
import Storage
import Synchronization

/// The senders of one reporting pass: `reporting.concurrency` threads taking due reports from the outbox
/// while the pass goes on planning, so one slow or hanging call to Apple holds one report, not all of them.
/// One report per token is in the outbox at a time (`enqueueReport`), so one is in flight per token (Apple:
/// `SimultaneousSubmissionError`); no report is sent twice in a pass.
///
/// A call still unanswered well past the typical answer time gives its place up: a new sender takes over, and the slow one
/// ends once its call returns (answered or timed out). So calls that hang until the request timeout cost
/// threads, not throughput, up to `lingeringPerSender` × `reporting.concurrency` calls in flight at most.
final class SenderPool: Sendable {
    private struct Work {
        var buffer: [StoredReport] = []
        /// Reports sent (or being sent) in this pass.
        var taken: Set<String> = []
        /// Claimed reports this pass will not send (already sent in it).
        var declined: [String] = []

        var planningDone = false
        /// Apple answered the pass's first report, or the probe wait is over.
        var probed = false
        /// Senders with a call in flight, and since when.
        var inFlight: [Int: UInt64] = [:]
        /// Senders whose slow call gave its place to a new sender: they end when their call returns.
        var replaced: Set<Int> = []
        var senders = 0
        /// The sender threads not yet joined. A sender is added only under the lock and only before `finished`,
        /// so once `finish` finds this empty under the lock, no sender can follow.
        var threads: [BackgroundThread] = []
        var finished = false
        /// Moving average of answered calls' durations, in milliseconds (nil until the first answer).
        var typicalMilliseconds: Double?
        /// When a look at the outbox last found nothing due: idle senders look again at most every 100 ms.
        var foundNothingAt: UInt64?
    }

    private enum Next {
        case report(StoredReport)
        case wait
        case done
    }

    let service: ReportingService
    let client: ExternalPurchaseAPIClient
    /// The pass's moment when it was given one (tests, the CLI); otherwise the clock, read at each look, so
    /// a report that comes due during the pass (the retry of a timed-out call) goes out in it.
    let fixedNow: Int64?
    private let work = Mutex(Work())
    /// Idle senders wait on this: new reports, an answer, the end of planning, or the clock wakes them.
    private let more: WakeUp
    /// The watcher waits on this between looks; `finish` ends its wait.
    private let watcherWakeUp: WakeUp
    /// When the pass began, on the clock's monotonic reading. Every span of the pass (the probe's wait, a slow
    /// call, the pause between looks) is read from the service's clock, so a test's `ManualClock` decides them.
    private let started: UInt64

    /// A pass opens with one report: when Apple refuses us all (401, 403, a key that cannot sign), it does so
    /// once, not once per sender. The others join when that answer is in, or after this long (a hanging first
    /// call must not hold the pass).
    static let probeWaitMilliseconds: Int64 = 500
    /// A call is treated as hanging once it takes four times the pass's typical answer time (a moving average),
    /// between these bounds: a hanging call then costs its sender a fraction of a second, not the timeout.
    static let slowCallBounds = (minimumMilliseconds: 500.0, maximumMilliseconds: 2_000.0)
    static let lingeringPerSender = 32

    init(service: ReportingService, client: ExternalPurchaseAPIClient, now: Int64?) {
        self.service = service
        self.client = client
        self.fixedNow = now
        more = WakeUp(clock: service.clock)
        watcherWakeUp = WakeUp(clock: service.clock)
        started = service.clock.uptimeNanoseconds()
    }

    /// Milliseconds on the clock's monotonic reading since `since`.
    private func elapsedMilliseconds(since: UInt64) -> Double {
        Double(service.clock.uptimeNanoseconds() &- since) / 1e6
    }

    func start(threads count: Int) {
        let count = max(1, count)
        for _ in 0..<count { addSender() }
        let limit = count * (Self.lingeringPerSender + 1)
        let watcher = BackgroundThread(name: "linkout-report-watch") { [self] in watch(limit: limit) }
        monitor.withLock { $0 = watcher }
    }

    private let monitor = Mutex<BackgroundThread?>(nil)

    private func addSender() {
        work.withLock { addSender(&$0) }
    }

    /// Starts a sender under the lock (its first look at `work` waits until the caller lets go).
    private func addSender(_ work: inout Work) {
        let index = work.senders
        work.senders += 1
        work.threads.append(BackgroundThread(name: "linkout-report-\(index)") { [self] in run(index) })
    }

    /// Replaces senders whose call is slower than `slowCall`, up to `limit` senders in all; looks every 50 ms
    /// of the clock's time.
    private func watch(limit: Int) {
        while true {
            let finished = work.withLock { work -> Bool in
                guard !work.finished else { return true }
                let now = service.clock.uptimeNanoseconds()
                let typical = 4 * (work.typicalMilliseconds ?? 250)
                let slowCall = min(
                    max(typical, Self.slowCallBounds.minimumMilliseconds),
                    Self.slowCallBounds.maximumMilliseconds
                )
                for (index, since) in work.inFlight
                where !work.replaced.contains(index) && Double(now &- since) / 1e6 >= slowCall
                    && work.senders < limit
                {
                    work.replaced.insert(index)
                    addSender(&work)
                }
                return false
            }
            if finished { return }
            watcherWakeUp.wait(until: service.clock.nowMilliseconds() + 50)
        }
    }

    /// New reports are in the outbox: idle senders look again.
    func moreQueued() {
        for _ in 0..<work.withLock({ $0.senders }) { more.signal() }
    }

    /// Planning is over: senders stop once nothing more is due. Returns when every send has its answer.
    func finish() {
        work.withLock { $0.planningDone = true }
        moreQueued()
        // Senders added while these are joined (replacing a slow call) are joined too: one is added only while
        // another has a call in flight, so the list is final once it is empty.
        while let thread = work.withLock({ work -> BackgroundThread? in
            guard let thread = work.threads.popLast() else {
                work.finished = true
                return nil
            }
            return thread
        }) {
            thread.join()
        }
        watcherWakeUp.signal()
        monitor.withLock { $0 }?.join()
        // Claims no sender took (sending paused or blocked) are given back, so the next pass, or another
        // instance, sends them without waiting for the lease to end.
        let unsent = work.withLock { work in
            defer { (work.buffer, work.declined) = ([], []) }
            return work.buffer.map(\.requestIdentifier) + work.declined
        }
        if !unsent.isEmpty {
            do {
                try service.ledger.reports.releaseReportClaims(unsent)
            } catch {
                service.logger.warning("claimed reports not released", ["error": "\(error)"])
            }
        }
    }

    private func run(_ index: Int) {
        while service.maySend(now: now()) {
            switch next() {
            case .report(let report):
                let sentAt = service.clock.uptimeNanoseconds()
                work.withLock { $0.inFlight[index] = sentAt }
                let settled = service.send(report, client: client)
                let milliseconds = elapsedMilliseconds(since: sentAt)
                let replaced = work.withLock { work in
                    work.inFlight[index] = nil
                    if settled {
                        work.typicalMilliseconds =
                            work.typicalMilliseconds.map { 0.9 * $0 + 0.1 * milliseconds }
                            ?? milliseconds
                    }
                    if !settled && fixedNow == nil {
                        // A live pass sends it again once its backoff is over, if the pass is still going.
                        work.taken.remove(report.requestIdentifier)
                    }
                    work.probed = true
                    return work.replaced.contains(index)
                }
                // The probe is answered, or a call is over: idle senders look again (the pass may be done, or
                // this call's retry due).
                moreQueued()
                if replaced { return }
            case .wait:
                more.wait(until: service.clock.nowMilliseconds() + 50)
            case .done:
                return
            }
        }
    }

    private func now() -> Int64 {
        fixedNow ?? service.clock.nowMilliseconds()
    }

    private func next() -> Next {
        work.withLock { work in
            if !work.probed && !work.taken.isEmpty {
                guard elapsedMilliseconds(since: started) >= Double(Self.probeWaitMilliseconds) else { return .wait }
                work.probed = true
            }
            if work.buffer.isEmpty {
                let planningDone = work.planningDone
                if !planningDone || !work.inFlight.isEmpty, let last = work.foundNothingAt,
                    elapsedMilliseconds(since: last) < 100
                {
                    return .wait
                }
                let due: [StoredReport]
                do {
                    // Reports still pending from this pass come back from the query; ask for enough beyond them.
                    // Claimed, not just read: another instance on the same database skips these while we send.
                    // Only what the senders take up soon, so no claim waits in the buffer beyond its lease.
                    let now = now()
                    due = try service.ledger.reports.claimDueReports(
                        now: now,
                        limit: 2 * Int(service.configuration.reporting.concurrency),
                        leaseUntil: now + service.configuration.storage.leaseSeconds * 1000
                    )
                } catch {
                    service.logger.error("due reports could not be read", ["error": "\(error)"])
                    return .done
                }
                work.buffer = due.filter { !work.taken.contains($0.requestIdentifier) }.reversed()
                // Sent once in this pass already (a retry due again at this pass's time): not again, and the
                // claim is given back at the end.
                work.declined += due.filter { work.taken.contains($0.requestIdentifier) }.map(\.requestIdentifier)
                // While calls are in flight (slow ones linger), their retries may come due: keep looking.
                if work.buffer.isEmpty {
                    work.foundNothingAt = service.clock.uptimeNanoseconds()
                    return planningDone && (fixedNow != nil || work.inFlight.isEmpty) ? .done : .wait
                }
            }
            guard let report = work.buffer.popLast() else { return .wait }
            work.taken.insert(report.requestIdentifier)
            return .report(report)
        }
    }
}
