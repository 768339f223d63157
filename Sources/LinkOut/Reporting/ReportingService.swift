import Crypto
import Dispatch
package import Domain
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
package final class ReportingService: BackgroundService {
    /// What reporting is doing, for `/readyz`, the admin API and `linkout report status`.
    package enum Status: Sendable, Equatable {
        case running
        /// No usable Apple credentials: reports are planned and wait in the outbox.
        case waitingForCredentials(String)
        /// Apple refuses us (401, an undocumented 3xx or 4xx) for some apps, or the key cannot sign (every app):
        /// one report of each is tried every `ReportingBlock.probeInterval` until Apple takes one again; theirs
        /// wait in the outbox, and the other apps' go on. Never empty; every app's block first, then by app.
        case blocked([ReportingBlock])

        package var description: String {
            switch self {
            case .running: "running"
            case .waitingForCredentials(let reason): "waiting for Apple credentials: \(reason)"
            case .blocked(let blocks): blocks.map(\.description).joined(separator: " | ")
            }
        }

        /// The blocks in force (none unless `.blocked`).
        package var blocks: [ReportingBlock] {
            if case .blocked(let blocks) = self { blocks } else { [] }
        }

        /// Whether any report may be sent: credentials are there and no block holds back every app.
        var sendsAtAll: Bool {
            switch self {
            case .running: true
            case .waitingForCredentials: false
            case .blocked(let blocks): blocks.allSatisfy { $0.scope != nil }
            }
        }

        /// The apps held back while the others send.
        var blockedScopes: [ReportingScope] { blocks.compactMap(\.scope) }

        /// Whether reports of `environment` may be held back now: no credentials, or a block of every app or of
        /// one of that environment's apps (the monthly close counts its due work as blocked then).
        package func holdsBack(_ environment: Environment) -> Bool {
            switch self {
            case .running: false
            case .waitingForCredentials: true
            case .blocked(let blocks): blocks.contains { $0.scope == nil || $0.scope?.environment == environment }
            }
        }
    }

    let configuration: Configuration
    let ledger: Ledger
    /// The ledger's reports as an outbox: claimed, sent, recorded, given back; never those of a blocked app.
    let outbox: ReportOutbox
    /// The key, re-read when its file changes (checked at most once a minute, in ticks).
    let keys: RotatingCredentials
    private let httpClient: HTTPClient
    let logger: Logger
    let clock: Clock
    let metrics: Metrics
    /// The status, shared with the outbox (its claims leave out the apps held back).
    private var state: ReportOutbox.SharedStatus { outbox.status }
    /// The background loop: a pass every `pollIntervalSeconds`, sooner when a retry comes due or when woken.
    let worker: PeriodicWorker
    private let started = Atomic<Bool>(false)
    /// Passes finished since start (tests wait for the first one before they depend on what it saw).
    package let passesCompleted = Atomic<Int>(0)
    /// When the background thread last showed life (a tick began, or a report was sent), UNIX ms.
    let heartbeat = Atomic<Int64>(0)
    /// Ticks never overlap (the background thread, a wake-up and a test or CLI call may race for one).
    private let tickLock = Mutex(())
    /// Where the planner's next window of custom-link tokens checked for duplicates starts (`ReportPlanner`).
    let duplicateCursor = DuplicateScanCursor()
    /// No report is sent before this moment (UNIX ms): Apple answered 429.
    let pausedUntil = Atomic<Int64>(0)
    /// Whether Apple took a report signed with the key in use since it loaded (`refreshCredentials`).
    let keyTakenSinceLoaded = Atomic<Bool>(false)

    /// While Apple's 429 holds sending back, until when (UNIX ms), for `/readyz` and `/metrics`.
    func rateLimitedUntil(now: Int64) -> Int64? {
        let until = pausedUntil.load(ordering: .relaxed)
        return until > now ? until : nil
    }

    /// Apple's pause as `linkout report status` shows it, while it lasts.
    package func pauseLine(now: Int64) -> String? {
        rateLimitedUntil(now: now).map {
            "paused: Apple answered 429; no report is sent before \(ReportingBlock.timestamp($0))"
        }
    }

    let identifiers = Mutex<ReportIdentifiers?>(nil)
    /// When this ledger was restored from a backup, if it was (`RestoreDoubt`).
    let restoredAt: Int64?

    /// Most reports planned or sent per tick; the rest wait for the next tick.
    static let batchLimit = 200

    /// Most bytes of an answer from Apple's reporting API taken.
    static let maxAnswerBytes = 256 << 10

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
        outbox = ReportOutbox(store: ledger.reports, status: ReportOutbox.SharedStatus(.running))
        self.logger = logger
        self.clock = clock
        worker = PeriodicWorker(clock: clock)
        let now = clock.nowMilliseconds()
        keys = RotatingCredentials(apple: configuration.apple, now: now)
        var http = HTTPClient.Configuration()
        http.totalTimeout = .seconds(configuration.reporting.requestTimeoutSeconds)
        http.caFile = configuration.apple.caFile
        http.proxy = configuration.apple.proxy
        // Apple's answers to a report are small (an empty 200, a list of errors, a Retrieve of one report): the
        // 8 MiB any client takes, held by each of the senders' slow calls at once, took 1.4 GB.
        http.maxResponseBytes = Self.maxAnswerBytes
        httpClient = HTTPClient(configuration: http)
        restoredAt = RestoreDoubt.restoredAt(ledger, logger: logger)
        switch keys.current {
        case .success:
            // A block survives a restart (and shows in `linkout report status`) until Apple takes a report. If it
            // cannot be read, sending starts, and the next refusal blocks again.
            var blocks: [ReportingBlock] = []
            do {
                blocks = try ledger.settings.settings(prefixed: ReportingBlock.setting).compactMap { setting in
                    ReportingBlock.scope(ofSetting: setting.name).flatMap {
                        ReportingBlock(stored: setting.value, scope: $0)
                    }
                }
            } catch {
                Self.storageFailed("reporting block could not be read; sending starts", error, logger, metrics)
            }
            if !blocks.isEmpty { outbox.status.withLock { $0 = .blocked(Self.ordered(blocks)) } }
        case .failure(let problem):
            outbox.status.withLock { $0 = .waitingForCredentials("\(problem.field) \(problem.problem)") }
        }
        // Apple's pause outlives a restart (`ReportingPause`), whatever the credentials are now: one loaded later
        // sends nothing before it ends either. If it cannot be read, sending starts, and the next 429 pauses again.
        do {
            if let paused = try ReportingPause.stored(in: ledger, now: now) {
                pausedUntil.store(paused, ordering: .relaxed)
            }
        } catch {
            Self.storageFailed("Apple's pause could not be read; sending starts", error, logger, metrics)
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
        state.withLock(change)
    }

    /// Blocks as the status lists them: every app's first, then by app and environment.
    static func ordered(_ blocks: [ReportingBlock]) -> [ReportingBlock] {
        blocks.sorted { lhs, rhs in
            switch (lhs.scope, rhs.scope) {
            case (nil, _): rhs.scope != nil
            case (_, nil): false
            case (let left?, let right?): left < right
            }
        }
    }

    // MARK: running

    /// Starts the background thread: a tick every `pollIntervalSeconds`, or at once when woken.
    package func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        heartbeat.store(clock.nowMilliseconds(), ordering: .relaxed)
        // A block carried over from before the restart is probed at once: the configuration may be fixed.
        state.withLock { state in
            if case .blocked(let blocks) = state {
                let now = clock.nowMilliseconds()
                state = .blocked(
                    blocks.map { block in
                        var block = block
                        block.nextProbeAt = now
                        return block
                    }
                )
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
    /// or the next probe of a blocked app. At least a second away: a report due but not sent (sending blocked or
    /// paused) must not spin the loop.
    private func nextPassAt() -> Int64? {
        let soonest = clock.nowMilliseconds() + 1_000
        let status = self.status
        let probe = status.blocks.map(\.nextProbeAt).min().map { max(soonest, $0) }
        guard status.sendsAtAll else { return probe }
        do {
            let due = try ledger.reports.dueReports(now: .max, limit: 1, scopes: .excluding(status.blockedScopes))
                .first.map { max(soonest, $0.nextAttemptAt) }
            return [probe, due].compactMap { $0 }.min()
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
    static func storageFailed(
        _ message: String,
        _ error: any Error,
        _ logger: Logger,
        _ metrics: Metrics,
        _ metadata: [String: String] = [:]
    ) {
        logger.error(message, metadata.merging(["error": "\(error)"]) { kept, _ in kept })
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
            ledger.bringOutboxesForward(clock: clock, logger: logger)
            placeLineItemsAwaitingToken()
            refreshCredentials(now: now)
            let client = self.client
            if let client { probeIfBlocked(now: now, client: client) }
            let senders = client.map { makeSenders(client: $0, now: now) }
            senders?.start()
            // A bounded number of planning batches per pass: tokens that cannot be queued (they break Apple's
            // rules) come back in every plan and must not keep the pass going.
            planning: for _ in 0..<Self.planningBatchesPerPass where !worker.isStopping {
                var queued = 0
                var setAside = false
                var planned: [PlannedReport] = []
                do {
                    planned = try plan(now: now)
                } catch {
                    Self.storageFailed("reporting pass failed", error, logger, metrics)
                    break
                }
                for (index, report) in planned.enumerated() {
                    do {
                        // Items Apple would refuse leave the report; the token is planned again without them.
                        if try setAsideRefused(report, now: now) {
                            setAside = true
                        } else if try enqueue(report, now: now) {
                            queued += 1
                        }
                    } catch let error as StorageError where error.retryAfterSeconds != nil {
                        // The ledger takes no writes (a full disk, the database server gone): every report of
                        // the batch would fail alike. One line for them all, and the pass ends; the next pass
                        // tries again. It was a line per token on every pass, thousands a minute.
                        senders?.moreAdded()
                        Self.storageFailed(
                            "reports not queued: the ledger takes no writes; the next pass tries again",
                            error,
                            logger,
                            metrics,
                            ["reports_not_queued": String(planned.count - index)]
                        )
                        break planning
                    } catch {
                        logger.error(
                            "report not queued",
                            ["external_purchase_id": report.report.externalPurchaseId.rawValue, "error": "\(error)"]
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
}
