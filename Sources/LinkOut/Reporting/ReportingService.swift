import Crypto
import Dispatch
import Domain
import ExternalPurchase
import Foundation
package import Lifecycle
package import Logging
import Outbound
import Payments
package import Storage
package import Synchronization

/// Reports every recorded token to Apple, exactly once per piece of content, through the ledger's outbox.
///
/// Each tick plans (tokens quiet for `noLineItemAfterSeconds` → `NO_LINE_ITEM` or `DUPLICATE_TOKEN`; new line
/// items → `LINE_ITEM`; a rejected report whose token got new line items → the full report again under the same
/// `requestIdentifier`) and then sends what is due. A report is written to the outbox before it is sent, with its
/// exact body, so a crash or restart retries the same bytes under the same `requestIdentifier` and never mints a
/// second one for the same content. One report per token is open at a time (Apple: `SimultaneousSubmissionError`).
package final class ReportingService: Sendable {
    /// What reporting is doing, for `/readyz`, the admin API and `linkout report status`.
    package enum Status: Sendable, Equatable {
        case running
        /// No usable Apple credentials: reports are planned and wait in the outbox.
        case waitingForCredentials(String)
        /// Apple refuses us (401, an undocumented 4xx) or the key cannot sign: one report is tried every
        /// `ReportingBlock.probeInterval` until Apple takes one again; the others wait in the outbox.
        case blocked(ReportingBlock)

        package var description: String {
            switch self {
            case .running: "running"
            case .waitingForCredentials(let reason): "waiting for Apple credentials: \(reason)"
            case .blocked(let block): block.description
            }
        }
    }

    let configuration: Configuration
    let ledger: Ledger
    /// The ledger's reports as an outbox: claimed, sent, recorded, given back.
    let outbox: ReportOutbox
    /// The key, re-read when its file changes (checked at most once a minute, in ticks).
    let keys: RotatingCredentials
    private let httpClient: HTTPClient
    let logger: Logger
    let clock: Clock
    let metrics: Metrics
    private let state: Mutex<Status>
    /// The background loop: a pass every `pollIntervalSeconds`, sooner when a retry comes due or when woken.
    private let worker: PeriodicWorker
    private let started = Atomic<Bool>(false)
    /// Passes finished since start (tests wait for the first one before they depend on what it saw).
    package let passesCompleted = Atomic<Int>(0)
    /// When the background thread last showed life (a tick began, or a report was sent), UNIX ms.
    let heartbeat = Atomic<Int64>(0)
    /// Ticks never overlap (the background thread, a wake-up and a test or CLI call may race for one).
    private let tickLock = Mutex(())
    /// Where the planner's next window of custom-link tokens checked for duplicates starts (`ReportPlanner`).
    private let duplicateCursor = DuplicateScanCursor()
    /// No report is sent before this moment (UNIX ms): Apple answered 429.
    private let pausedUntil = Atomic<Int64>(0)
    private let identifiers = Mutex<ReportIdentifiers?>(nil)
    /// When this ledger was restored from a backup, if it was (`RestoreDoubt`).
    let restoredAt: Int64?

    /// Most reports planned or sent per tick; the rest wait for the next tick.
    static let batchLimit = 200

    /// `metrics`: where failed reads of the ledger are counted (`linkout_reporting_storage_errors_total`).
    package init(
        configuration: Configuration,
        ledger: Ledger,
        logger: Logger,
        clock: Clock = .system,
        metrics: Metrics = Metrics()
    ) {
        self.configuration = configuration
        self.metrics = metrics
        self.ledger = ledger
        outbox = ReportOutbox(store: ledger.reports)
        self.logger = logger
        self.clock = clock
        worker = PeriodicWorker(clock: clock)
        let now = clock.nowMilliseconds()
        keys = RotatingCredentials(apple: configuration.apple, now: now)
        var http = HTTPClient.Configuration()
        http.totalTimeout = .seconds(configuration.reporting.requestTimeoutSeconds)
        http.caFile = configuration.apple.caFile
        http.proxy = configuration.apple.proxy
        httpClient = HTTPClient(configuration: http)
        restoredAt = RestoreDoubt.restoredAt(ledger, logger: logger)
        switch keys.current {
        case .success:
            // A block survives a restart (and shows in `linkout report status`) until Apple takes a report. If
            // it cannot be read, sending starts, and the next refusal blocks again.
            var stored: String?
            do {
                stored = try ledger.settings.setting(named: ReportingBlock.setting)
            } catch {
                Self.storageFailed("reporting block could not be read; sending starts", error, logger, metrics)
            }
            state = Mutex(stored.flatMap(ReportingBlock.init(stored:)).map(Status.blocked) ?? .running)
        case .failure(let problem):
            state = Mutex(.waitingForCredentials("\(problem.field) \(problem.problem)"))
        }
    }

    /// A client signing with the key in use now, or nil while there is none.
    var client: ExternalPurchaseAPIClient? {
        guard case .success(let credentials) = keys.current else { return nil }
        return ExternalPurchaseAPIClient(
            credentials: credentials,
            productionURL: configuration.apple.productionURL,
            sandboxURL: configuration.apple.sandboxURL,
            httpClient: httpClient
        )
    }

    package var status: Status { state.withLock { $0 } }

    /// Changes the state under its lock (the block's transitions, a reloaded key).
    func updateState<Value>(_ change: (inout Status) -> Value) -> Value {
        state.withLock { change(&$0) }
    }

    // MARK: running

    /// Starts the background thread: a tick every `pollIntervalSeconds`, or at once when woken.
    package func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        heartbeat.store(clock.nowMilliseconds(), ordering: .relaxed)
        // A block carried over from before the restart is probed at once: the configuration may be fixed.
        state.withLock { state in
            if case .blocked(var block) = state {
                block.nextProbeAt = clock.nowMilliseconds()
                state = .blocked(block)
            }
        }
        worker.startScheduling(
            name: "linkout-reporting",
            intervalMilliseconds: configuration.reporting.pollIntervalSeconds * 1000
        ) { [self] in
            heartbeat.store(clock.nowMilliseconds(), ordering: .relaxed)
            tick()
            return nextPassAt()
        }
    }

    /// When the next pass has something to send, if before the next poll: a retry's backoff (a timed-out call),
    /// or the next probe while blocked. At least a second away: a report due but not sent (sending blocked or
    /// paused) must not spin the loop.
    private func nextPassAt() -> Int64? {
        let soonest = clock.nowMilliseconds() + 1_000
        if case .blocked(let block) = status { return max(soonest, block.nextProbeAt) }
        do {
            return try ledger.reports.dueReports(now: .max, limit: 1).first.map { max(soonest, $0.nextAttemptAt) }
        } catch {
            Self.storageFailed(
                "due reports could not be read; the next pass is at the poll interval",
                error,
                logger,
                metrics
            )
            return nil
        }
    }

    /// A read of the ledger failed: said in the log and counted, never taken for "nothing there".
    static func storageFailed(_ message: String, _ error: any Error, _ logger: Logger, _ metrics: Metrics) {
        logger.error(message, ["error": "\(error)"])
        metrics.increment("linkout_reporting_storage_errors_total")
    }

    /// Whether the background thread is alive: not started (CLI), or seen within a few poll intervals and
    /// request timeouts. A stuck thread takes the instance out of readiness.
    package func isAlive(now: Int64? = nil) -> Bool {
        let now = now ?? clock.nowMilliseconds()
        guard started.load(ordering: .relaxed), !worker.isStopping else { return true }
        let allowance =
            (3 * configuration.reporting.pollIntervalSeconds + 2 * configuration.reporting.requestTimeoutSeconds + 60)
            * 1000
        return now - heartbeat.load(ordering: .relaxed) <= allowance
    }

    /// Asks for a tick now (new line items arrived).
    package func wake() {
        worker.wake()
    }

    /// Stops after the current tick (a call in flight finishes or times out).
    package func stop() {
        worker.stop()
    }

    /// One planning and sending pass; reachable so tests and the CLI can drive it. Planning goes on batch after
    /// batch while senders (`reporting.concurrency` threads) send what is due alongside it; the pass ends once
    /// nothing more is due and every send has its answer. A report is sent at most once per pass.
    package func tick(now: Int64? = nil) {
        let now = now ?? clock.nowMilliseconds()
        tickLock.withLock { _ in
            placeHeldLineItems()
            refreshCredentials(now: now)
            let client = self.client
            if let client { probeIfBlocked(now: now, client: client) }
            let senders = client.map { makeSenders(client: $0, now: now) }
            senders?.start()
            // A bounded number of planning batches per pass: tokens that cannot be queued (they break Apple's
            // rules) come back in every plan and must not keep the pass going.
            for _ in 0..<Self.planningBatchesPerPass where !worker.isStopping {
                var queued = 0
                var setAside = false
                var planned: [PlannedReport] = []
                do {
                    planned = try plan(now: now)
                } catch {
                    Self.storageFailed("reporting pass failed", error, logger, metrics)
                    break
                }
                for report in planned {
                    do {
                        // Items Apple would refuse leave the report; the token is planned again without them.
                        if try setAsideRefused(report) {
                            setAside = true
                        } else if try enqueue(report, now: now) {
                            queued += 1
                        }
                    } catch {
                        logger.error(
                            "report not queued",
                            ["external_purchase_id": report.report.externalPurchaseId, "error": "\(error)"]
                        )
                    }
                }
                senders?.moreAdded()
                guard setAside || (planned.count >= Self.batchLimit && queued > 0) else { break }
            }
            senders?.finish()
        }
        passesCompleted.add(1, ordering: .relaxed)
    }

    /// The pass's senders: `reporting.concurrency` threads over the report outbox, a call that hangs replaced.
    private func makeSenders(client: ExternalPurchaseAPIClient, now: Int64) -> OutboxSender<ReportOutbox> {
        OutboxSender(
            outbox: outbox,
            settings: .init(
                concurrency: Int(configuration.reporting.concurrency),
                leaseMilliseconds: configuration.storage.leaseSeconds * 1000,
                // Only what the senders take up soon, so no claim waits in the buffer beyond its lease.
                claimLimit: 2 * Int(configuration.reporting.concurrency),
                lingeringPerSender: 32,
                fixedNow: now,
                threadName: "linkout-report"
            ),
            clock: clock,
            logger: logger,
            maySend: { [self] now in maySend(now: now) },
            deliver: { [self] report in send(report, client: client) }
        )
    }

    /// Held line items (no token of the customer was active at their date) go on a token the app forwarded since,
    /// before planning, so this pass reports them.
    private func placeHeldLineItems() {
        do {
            for placed in try LineItemPlacement(ledger: ledger).placeHeld() {
                logger.info(
                    "held line item placed on a token of the customer",
                    [
                        "line_item_id": placed.item.lineItemId, "held_on": placed.item.externalPurchaseId,
                        "external_purchase_id": placed.token,
                    ]
                )
            }
        } catch {
            logger.error("held line items not placed", ["error": "\(error)"])
        }
    }

    /// Planning batches of `batchLimit` tokens per pass: 100,000 reports at most, the rest in the next pass.
    static let planningBatchesPerPass = 500

    /// What is due now, without writing anything (`linkout report --dry-run` prints this).
    package func plan(now: Int64) throws -> [PlannedReport] {
        try ReportPlanner(
            ledger: ledger,
            noLineItemAfterSeconds: configuration.reporting.noLineItemAfterSeconds,
            batchLimit: Self.batchLimit,
            paymentHold: configuration.payments.registration.sessionLifetime,
            identifiers: try reportIdentifiers(),
            duplicateCursor: duplicateCursor
        ).plan(now: now)
    }

    /// The planner's identifiers, keyed by the installation's secret (read from the ledger once).
    private func reportIdentifiers() throws -> ReportIdentifiers {
        if let made = identifiers.withLock({ $0 }) { return made }
        let made = ReportIdentifiers(secret: try ledger.settings.secret(named: "identifiers"))
        identifiers.withLock { $0 = made }
        return made
    }

    /// Puts a planned report in the outbox; false when it breaks Apple's rules and is left out (logged).
    private func enqueue(_ planned: PlannedReport, now: Int64) throws -> Bool {
        guard planned.problems.isEmpty else {
            logger.error(
                "report not queued: it breaks Apple's rules",
                [
                    "external_purchase_id": planned.report.externalPurchaseId,
                    "problems": planned.problems.map(\.description).joined(separator: "; "),
                ]
            )
            return false
        }
        let body = try AppleJSON.text(planned.report)
        if let revised = planned.revises {
            try ledger.reports.reviseRejectedReport(revised, body: body, lineItemRows: planned.lineItemRows, now: now)
            return true
        }
        let stored = StoredReport(
            requestIdentifier: planned.report.requestIdentifier,
            externalPurchaseId: planned.report.externalPurchaseId,
            environment: planned.environment,
            bundleId: planned.bundleId,
            status: planned.report.status,
            body: body,
            nextAttemptAt: now,
            createdAt: now
        )
        do {
            try ledger.reports.enqueueReport(stored, lineItemRows: planned.lineItemRows)
        } catch {
            // Another instance on the same database queued this token's report first (both planned it from the
            // same tables): theirs goes out, nothing is wrong.
            guard error.code == .conflict else { throw error }
            logger.debug("report already queued", ["external_purchase_id": stored.externalPurchaseId])
            return false
        }
        return true
    }

    /// Sets aside the unsent line items the planned report's problems name (`LineItemScreen`), so the token is
    /// planned again without them: one bad item never blocks its token. True when any was.
    private func setAsideRefused(_ planned: PlannedReport) throws -> Bool {
        let named = Dictionary(grouping: planned.problems.filter { $0.lineItemId != nil }) { $0.lineItemId ?? "" }
        guard !named.isEmpty else { return false }
        let token = planned.report.externalPurchaseId
        let rows = Set(planned.lineItemRows)
        let notes = try ledger.reports.lineItems(for: token).filter {
            rows.contains($0.rowId) && named[$0.lineItemId] != nil
        }.map { item in
            (
                rowId: item.rowId,
                note: LineItemScreen.note(
                    named[item.lineItemId] ?? [],
                    externalPurchaseId: token,
                    lineItemId: item.lineItemId
                )
            )
        }
        guard try ledger.reports.setAsideUnsent(notes) > 0 else { return false }
        logger.error(
            "line item set aside: Apple would refuse it",
            ["external_purchase_id": token, "problems": planned.problems.map(\.description).joined(separator: "; ")]
        )
        return true
    }

    // MARK: sending

    /// Whether a sender may take another report in a pass at `now`: running, not stopping, not paused by a 429.
    func maySend(now: Int64) -> Bool {
        !worker.isStopping && status == .running && now >= pausedUntil.load(ordering: .relaxed)
    }

    /// Sends one report, settles and records Apple's answer, and acts on what it means for everyone else.
    /// Returns whether the report left the pending state.
    @discardableResult
    func send(_ report: StoredReport, client: ExternalPurchaseAPIClient) -> Bool {
        let environment = report.environment
        let began = clock.nowMilliseconds()
        if RestoreDoubt.applies(to: report, restoredAt: restoredAt, now: began) {
            // It may have gone out from the ledger's lost future: Apple's copy decides before anything is sent.
            let retrieved = client.retrieve(
                requestIdentifier: report.requestIdentifier,
                environment: environment,
                bundleId: report.bundleId,
                now: began
            )
            if let settled = RestoreDoubt.settle(report, retrieved: retrieved, at: clock.nowMilliseconds()) {
                return record(settled, for: report, outcome: nil, began: began)
            }
        }
        let outcome = client.send(
            body: Array(report.body.utf8),
            environment: environment,
            bundleId: report.bundleId,
            now: began
        )
        let sentAt = clock.nowMilliseconds()
        heartbeat.store(sentAt, ordering: .relaxed)
        var answer = AppleAnswer.interpret(outcome, attempts: report.attempts, sentAt: sentAt)
        if answer.next == .confirmWithRetrieve {
            let retrieved = client.retrieve(
                requestIdentifier: report.requestIdentifier,
                environment: environment,
                bundleId: report.bundleId,
                now: clock.nowMilliseconds()
            )
            answer = AppleAnswer.settle(
                answer,
                retrieved: retrieved,
                requestIdentifier: report.requestIdentifier,
                attempts: report.attempts,
                sentAt: clock.nowMilliseconds()
            )
        }
        if case .rejected(let body) = outcome, answer.attempt.state == .rejected {
            // Apple stands by its 400: act on what its errors say (spec §5.6).
            answer = AppleAnswer.rejected(
                AppleRejection.classify(body: body, report: report),
                body: body,
                attempts: report.attempts,
                sentAt: answer.attempt.at
            )
        }
        return record(answer, for: report, outcome: outcome, began: began)
    }

    /// Records Apple's answer to a report (or what Retrieve settled), logs it, and acts on what it means for the
    /// other reports (a block, a pause). `outcome`: the send's, nil when nothing was sent. Returns whether the
    /// report left the pending state.
    private func record(
        _ answer: AppleAnswer,
        for report: StoredReport,
        outcome: ExternalPurchaseAPIClient.Outcome?,
        began: Int64
    ) -> Bool {
        let sentAt = answer.attempt.at
        var metadata = [
            "external_purchase_id": report.externalPurchaseId, "request_identifier": report.requestIdentifier,
            "report.status": report.status.rawValue,
        ]
        if let status = answer.attempt.httpStatus { metadata["http.status"] = "\(status)" }
        if case .rejected(let body) = outcome { metadata["apple.errors"] = body }
        if case .networkError(let message) = outcome { metadata["error"] = message }
        if case .signingFailed(let message) = outcome { metadata["error"] = message }
        if let rewrite = answer.rewrite, !rewrite.setAside.isEmpty {
            metadata["line_items_set_aside"] = rewrite.setAside.keys.sorted().joined(separator: ",")
        }
        do {
            try outbox.record(ReportOutbox.Attempt(attempt: answer.attempt, rewrite: answer.rewrite), for: report)
        } catch {
            // The answer is lost with the write; the report stays as it was and is sent again (same bytes, same
            // requestIdentifier), and a duplicate 400 is settled with Retrieve.
            metadata["error"] = "\(error)"
            logger.error("report answer not recorded", metadata)
            return false
        }
        var (level, message) = (answer.logLevel, answer.message)
        if case .block(let reason, let detail) = answer.next {
            metadata["blocked"] = detail
            // One critical line when the block starts, not one per probe.
            if !block(reason, detail: detail, at: sentAt) {
                (level, message) = (.info, "reporting still blocked: the probe report was refused too")
            }
        }
        switch level {
        case .info: logger.info(message, metadata)
        case .warning: logger.warning(message, metadata)
        case .critical: logger.critical(message, metadata)
        }
        if case .pause(let until) = answer.next {
            // Apple's latest word on when to come back is the one that counts.
            pausedUntil.store(until, ordering: .relaxed)
        }
        // Apple read the report (200, or 400 about its content): it took the JWT, so whatever blocked us is over.
        // An answer to a request sent before the block began proves nothing about it.
        switch outcome {
        case .accepted, .rejected: unblock(at: sentAt, ifSentAfter: began)
        default: break
        }
        return answer.attempt.state != .pending
    }
}
