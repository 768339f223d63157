import Crypto
import Dispatch
import ExternalPurchase
import Foundation
import Lifecycle
import Logging
import Outbound
import Storage
import Synchronization

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
        /// Apple answered 401: the key or its IDs are wrong. Sending stopped until the configuration is fixed and
        /// the server restarted; reports wait in the outbox.
        case stoppedUnauthorized(String)

        package var description: String {
            switch self {
            case .running: "running"
            case .waitingForCredentials(let reason): "waiting for Apple credentials: \(reason)"
            case .stoppedUnauthorized(let reason): "stopped: \(reason)"
            }
        }
    }

    let configuration: Configuration
    let ledger: Ledger
    let client: ExternalPurchaseAPIClient?
    let logger: Logger
    let clock: Clock
    private let state: Mutex<Status>
    private let wakeUp = DispatchSemaphore(value: 0)
    private let thread = Mutex<BackgroundThread?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    /// When the background thread last showed life (a tick began, or a report was sent), UNIX ms.
    private let heartbeat = Atomic<Int64>(0)
    /// Ticks never overlap (the background thread, a wake-up and a test or CLI call may race for one).
    private let tickLock = Mutex(())

    /// Most reports planned or sent per tick; the rest wait for the next tick.
    static let batchLimit = 200

    package init(configuration: Configuration, ledger: Ledger, logger: Logger, clock: Clock = .system) {
        self.configuration = configuration
        self.ledger = ledger
        self.logger = logger
        self.clock = clock
        switch AppleCredentials.load(configuration.apple) {
        case .success(let credentials):
            var http = HTTPClient.Configuration()
            http.totalTimeout = .seconds(configuration.reporting.requestTimeoutSeconds)
            http.caFile = configuration.apple.caFile
            http.proxy = configuration.apple.proxy
            client = ExternalPurchaseAPIClient(
                credentials: credentials,
                productionURL: configuration.apple.productionURL,
                sandboxURL: configuration.apple.sandboxURL,
                httpClient: HTTPClient(configuration: http)
            )
            state = Mutex(.running)
        case .failure(let problem):
            client = nil
            state = Mutex(.waitingForCredentials("\(problem.field) \(problem.problem)"))
        }
    }

    package var status: Status { state.withLock { $0 } }

    // MARK: running

    /// Starts the background thread: a tick every `pollIntervalSeconds`, or at once when woken.
    package func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let interval = DispatchTimeInterval.seconds(Int(configuration.reporting.pollIntervalSeconds))
        heartbeat.store(clock.nowMilliseconds(), ordering: .relaxed)
        let loop = BackgroundThread(name: "linkout-reporting") { [self] in
            while !stopping.load(ordering: .relaxed) {
                heartbeat.store(clock.nowMilliseconds(), ordering: .relaxed)
                tick()
                _ = wakeUp.wait(timeout: .now() + interval)
            }
        }
        thread.withLock { $0 = loop }
    }

    /// Whether the background thread is alive: not started (CLI), or seen within a few poll intervals and
    /// request timeouts. A stuck thread takes the instance out of readiness.
    package func isAlive(now: Int64? = nil) -> Bool {
        let now = now ?? clock.nowMilliseconds()
        guard started.load(ordering: .relaxed), !stopping.load(ordering: .relaxed) else { return true }
        let allowance =
            (3 * configuration.reporting.pollIntervalSeconds + 2 * configuration.reporting.requestTimeoutSeconds + 60)
            * 1000
        return now - heartbeat.load(ordering: .relaxed) <= allowance
    }

    /// Asks for a tick now (new line items arrived).
    package func wake() {
        wakeUp.signal()
    }

    /// Stops after the current tick (a call in flight finishes or times out).
    package func stop() {
        guard started.load(ordering: .relaxed), !stopping.exchange(true, ordering: .relaxed) else { return }
        wakeUp.signal()
        thread.withLock { $0 }?.join()
    }

    /// One planning and sending pass; reachable so tests and the CLI can drive it.
    package func tick(now: Int64? = nil) {
        let now = now ?? clock.nowMilliseconds()
        tickLock.withLock { _ in
            do {
                for planned in try plan(now: now) {
                    do {
                        try enqueue(planned, now: now)
                    } catch {
                        logger.error(
                            "report not queued",
                            ["external_purchase_id": planned.report.externalPurchaseId, "error": "\(error)"]
                        )
                    }
                }
                try sendDue(now: now)
            } catch {
                logger.error("reporting pass failed", ["error": "\(error)"])
            }
        }
    }

    /// What is due now, without writing anything (`linkout report --dry-run` prints this).
    package func plan(now: Int64) throws -> [PlannedReport] {
        try ReportPlanner(
            ledger: ledger,
            noLineItemAfterSeconds: configuration.reporting.noLineItemAfterSeconds,
            batchLimit: Self.batchLimit
        ).plan(now: now)
    }

    private func enqueue(_ planned: PlannedReport, now: Int64) throws {
        guard planned.problems.isEmpty else {
            logger.error(
                "report not queued: it breaks Apple's rules",
                [
                    "external_purchase_id": planned.report.externalPurchaseId,
                    "problems": planned.problems.map(\.description).joined(separator: "; "),
                ]
            )
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = String(decoding: try encoder.encode(planned.report), as: UTF8.self)
        if let revised = planned.revises {
            try ledger.reviseRejectedReport(revised, body: body, lineItemRows: planned.lineItemRows, now: now)
            return
        }
        let stored = StoredReport(
            requestIdentifier: planned.report.requestIdentifier,
            externalPurchaseId: planned.report.externalPurchaseId,
            environment: planned.environment,
            bundleId: planned.bundleId,
            status: planned.report.status.rawValue,
            body: body,
            nextAttemptAt: now,
            createdAt: now
        )
        try ledger.enqueueReport(stored, lineItemRows: planned.lineItemRows)
    }

    // MARK: sending

    private func sendDue(now: Int64) throws {
        guard let client, status == .running else { return }
        for report in try ledger.dueReports(now: now, limit: Self.batchLimit) {
            if stopping.load(ordering: .relaxed) { return }
            let outcome = client.send(
                body: Array(report.body.utf8),
                environment: Environment(rawValue: report.environment) ?? .production,
                bundleId: report.bundleId
            )
            let answer = AppleAnswer.interpret(outcome, attempts: report.attempts, sentAt: clock.nowMilliseconds())
            try ledger.recordAttempt(report.requestIdentifier, answer.attempt)
            var metadata = [
                "external_purchase_id": report.externalPurchaseId, "request_identifier": report.requestIdentifier,
                "report.status": report.status,
            ]
            if let status = answer.attempt.httpStatus { metadata["http.status"] = "\(status)" }
            if case .rejected(let body) = outcome { metadata["apple.errors"] = body }
            if case .networkError(let message) = outcome { metadata["error"] = message }
            switch answer.logLevel {
            case .info: logger.info(answer.message, metadata)
            case .warning: logger.warning(answer.message, metadata)
            case .critical: logger.critical(answer.message, metadata)
            }
            switch answer.next {
            case .continueSending: continue
            case .endPass: return
            case .stopUnauthorized(let reason):
                state.withLock { $0 = .stoppedUnauthorized(reason) }
                return
            }
        }
    }
}
