import Crypto
import Dispatch
import ExternalPurchase
import Foundation
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
public final class ReportingService: Sendable {
    /// What reporting is doing, for `/readyz`, the admin API and `linkout report status`.
    public enum Status: Sendable, Equatable {
        case running
        /// No usable Apple credentials: reports are planned and wait in the outbox.
        case waitingForCredentials(String)
        /// Apple answered 401: the key or its IDs are wrong. Sending stopped until the configuration is fixed and
        /// the server restarted; reports wait in the outbox.
        case stoppedUnauthorized(String)

        public var description: String {
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
    private let state: Mutex<Status>
    private let wakeUp = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    /// When the background thread last showed life (a tick began, or a report was sent), UNIX ms.
    private let heartbeat = Atomic<Int64>(0)
    /// Ticks never overlap (the background thread, a wake-up and a test or CLI call may race for one).
    private let tickLock = Mutex(())

    /// Most reports planned or sent per tick; the rest wait for the next tick.
    static let batchLimit = 200

    public init(configuration: Configuration, ledger: Ledger, logger: Logger) {
        self.configuration = configuration
        self.ledger = ledger
        self.logger = logger
        switch Self.loadCredentials(configuration.apple) {
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

    public var status: Status { state.withLock { $0 } }

    /// Reads the `.p8` key; a missing or unreadable key names the field to fix.
    static func loadCredentials(_ apple: Configuration.Apple) -> Result<AppStoreJWT.Credentials, ConfigurationError> {
        guard !apple.issuerId.isEmpty else {
            return .failure(ConfigurationError(field: "apple.issuerId", problem: "is empty"))
        }
        guard !apple.keyId.isEmpty else {
            return .failure(ConfigurationError(field: "apple.keyId", problem: "is empty"))
        }
        guard !apple.privateKeyFile.isEmpty else {
            return .failure(ConfigurationError(field: "apple.privateKeyFile", problem: "is empty"))
        }
        guard let data = FileManager.default.contents(atPath: apple.privateKeyFile) else {
            return .failure(ConfigurationError(field: "apple.privateKeyFile", problem: "cannot be read"))
        }
        do {
            let key = try ES256Key(pem: String(decoding: data, as: UTF8.self))
            return .success(AppStoreJWT.Credentials(issuerId: apple.issuerId, keyId: apple.keyId, key: key))
        } catch {
            return .failure(
                ConfigurationError(field: "apple.privateKeyFile", problem: "is not a P-256 PKCS#8 key (.p8)")
            )
        }
    }

    // MARK: running

    /// Starts the background thread: a tick every `pollIntervalSeconds`, or at once when woken.
    public func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let interval = DispatchTimeInterval.seconds(Int(configuration.reporting.pollIntervalSeconds))
        heartbeat.store(WallClock.nowMilliseconds(), ordering: .relaxed)
        let thread = Thread { [self] in
            while !stopping.load(ordering: .relaxed) {
                heartbeat.store(WallClock.nowMilliseconds(), ordering: .relaxed)
                tick()
                _ = wakeUp.wait(timeout: .now() + interval)
            }
            stopped.signal()
        }
        thread.name = "linkout-reporting"
        thread.start()
    }

    /// Whether the background thread is alive: not started (CLI), or seen within a few poll intervals and
    /// request timeouts. A stuck thread takes the instance out of readiness.
    public func isAlive(now: Int64 = WallClock.nowMilliseconds()) -> Bool {
        guard started.load(ordering: .relaxed), !stopping.load(ordering: .relaxed) else { return true }
        let allowance =
            (3 * configuration.reporting.pollIntervalSeconds + 2 * configuration.reporting.requestTimeoutSeconds + 60)
            * 1000
        return now - heartbeat.load(ordering: .relaxed) <= allowance
    }

    /// Asks for a tick now (new line items arrived).
    public func wake() {
        wakeUp.signal()
    }

    /// Stops after the current tick (a call in flight finishes or times out).
    public func stop() {
        guard started.load(ordering: .relaxed), !stopping.exchange(true, ordering: .relaxed) else { return }
        wakeUp.signal()
        stopped.wait()
    }

    /// One planning and sending pass; public so tests and the CLI can drive it.
    public func tick(now: Int64 = WallClock.nowMilliseconds()) {
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

    // MARK: planning

    /// A report to put in the outbox, or a rejected one to revise.
    public struct PlannedReport: Sendable {
        public var report: ExternalPurchaseReport
        public var environment: String
        public var bundleId: String
        /// Line items (ledger rows) the report carries.
        public var lineItemRows: [Int64]
        /// The rejected report this revises, keeping its `requestIdentifier`.
        public var revises: String?
        public var problems: [ReportProblem]
    }

    /// What is due now, without writing anything (`linkout report --dry-run` prints this).
    public func plan(now: Int64) throws -> [PlannedReport] {
        var planned: [PlannedReport] = []
        let quietSince = now - configuration.reporting.noLineItemAfterSeconds * 1000
        for token in try ledger.tokensNeedingReports(quietSince: quietSince, limit: Self.batchLimit) {
            let items = try ledger.lineItems(for: token.externalPurchaseId)
            let fresh = items.filter { $0.reportRequestIdentifier == nil }
            let status: ExternalPurchaseReport.Status
            if !fresh.isEmpty {
                status = .lineItem
            } else if try isDuplicate(token) {
                status = .duplicateToken
            } else {
                status = .noLineItem
            }
            planned.append(
                try build(
                    token,
                    status: status,
                    items: items,
                    carrying: fresh,
                    requestIdentifier: Self.newIdentifier(),
                    now: now
                )
            )
        }
        for rejected in try ledger.reports(limit: Self.batchLimit, state: .rejected) {
            guard let token = try ledger.token(rejected.externalPurchaseId) else { continue }
            let items = try ledger.lineItems(for: token.externalPurchaseId)
            let fresh = items.filter { $0.reportRequestIdentifier == nil }
            guard !fresh.isEmpty else { continue }  // nothing changed: a 400 is not resent unchanged
            let carried = items.filter { $0.reportRequestIdentifier == rejected.requestIdentifier } + fresh
            var revision = try build(
                token,
                status: .lineItem,
                items: items,
                carrying: carried,
                requestIdentifier: rejected.requestIdentifier,
                now: now
            )
            revision.revises = rejected.requestIdentifier
            planned.append(revision)
        }
        return planned
    }

    private func build(
        _ token: StoredToken,
        status: ExternalPurchaseReport.Status,
        items: [StoredLineItem],
        carrying: [StoredLineItem],
        requestIdentifier: String,
        now: Int64
    ) throws -> PlannedReport {
        let decoder = JSONDecoder()
        let lineItems = try carrying.map { try decoder.decode(LineItem.self, from: Data($0.body.utf8)) }
        let carriedRows = Set(carrying.map(\.rowId))
        let earlier = try items.filter { !carriedRows.contains($0.rowId) }.map {
            try decoder.decode(LineItem.self, from: Data($0.body.utf8))
        }
        let report = ExternalPurchaseReport(
            requestIdentifier: requestIdentifier,
            externalPurchaseId: token.externalPurchaseId,
            status: status,
            lineItems: status == .lineItem ? lineItems : nil
        )
        let validator = ReportValidator(token: token.externalPurchaseToken, earlierLineItems: earlier, now: now)
        return PlannedReport(
            report: report,
            environment: token.environment,
            bundleId: token.bundleId,
            lineItemRows: carrying.map(\.rowId),
            revises: nil,
            problems: validator.problems(in: report)
        )
    }

    /// Apple: report every extra custom-link token of one customer and type, active at the same time, as
    /// `DUPLICATE_TOKEN`. The customer is known by the `appAccountToken` the app sent; the first token seen stays
    /// the one transactions are reported on.
    func isDuplicate(_ token: StoredToken) throws -> Bool {
        guard token.tokenType == "ACQUISITION" || token.tokenType == "SERVICES", token.appAccountToken != nil else {
            return false
        }
        let siblings = try ledger.tokensSharingCustomer(token)
        guard let primary = siblings.first(where: { Self.overlaps($0, token) }) else { return false }
        return primary.externalPurchaseId != token.externalPurchaseId
    }

    static func overlaps(_ a: StoredToken, _ b: StoredToken) -> Bool {
        a.createdAt <= (b.expiresAt ?? .max) && b.createdAt <= (a.expiresAt ?? .max)
    }

    static func newIdentifier() -> String {
        UUID().uuidString.lowercased()
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
            let environment = Environment(rawValue: report.environment) ?? .production
            let outcome = client.send(
                body: Array(report.body.utf8),
                environment: environment,
                bundleId: report.bundleId
            )
            let sentAt = WallClock.nowMilliseconds()
            let metadata = [
                "external_purchase_id": report.externalPurchaseId, "request_identifier": report.requestIdentifier,
                "report.status": report.status,
            ]
            switch outcome {
            case .accepted:
                try ledger.recordAttempt(
                    report.requestIdentifier,
                    ReportAttempt(state: .accepted, httpStatus: 200, response: nil, nextAttemptAt: sentAt, at: sentAt)
                )
                logger.info("report accepted by Apple", metadata)
            case .rejected(let body):
                try ledger.recordAttempt(
                    report.requestIdentifier,
                    ReportAttempt(state: .rejected, httpStatus: 400, response: body, nextAttemptAt: sentAt, at: sentAt)
                )
                logger.warning(
                    "report rejected by Apple; it waits for corrected data",
                    metadata.merging(["apple.errors": body]) { a, _ in a }
                )
            case .unauthorized:
                try ledger.recordAttempt(
                    report.requestIdentifier,
                    ReportAttempt(
                        state: .pending,
                        httpStatus: 401,
                        response: "unauthorized",
                        nextAttemptAt: sentAt,
                        at: sentAt
                    )
                )
                let reason = "Apple answered 401 to the JWT: check apple.issuerId, apple.keyId and the .p8 key"
                state.withLock { $0 = .stoppedUnauthorized(reason) }
                logger.critical("reporting stopped: Apple rejected our credentials", metadata)
                return
            case .rateLimited(let retryAt):
                let next = max(retryAt ?? 0, sentAt + Self.backoffMilliseconds(attempts: report.attempts))
                try ledger.recordAttempt(
                    report.requestIdentifier,
                    ReportAttempt(
                        state: .pending,
                        httpStatus: 429,
                        response: "rate limited",
                        nextAttemptAt: retryAt ?? next,
                        at: sentAt
                    )
                )
                logger.warning("Apple rate-limited reporting", metadata)
                return
            case .serverError(let status, let body):
                try ledger.recordAttempt(
                    report.requestIdentifier,
                    ReportAttempt(
                        state: .pending,
                        httpStatus: Int64(status),
                        response: String(body.prefix(2000)),
                        nextAttemptAt: sentAt + Self.backoffMilliseconds(attempts: report.attempts),
                        at: sentAt
                    )
                )
                logger.warning(
                    "report failed; will retry",
                    metadata.merging(["http.status": "\(status)"]) { a, _ in a }
                )
            case .networkError(let message):
                try ledger.recordAttempt(
                    report.requestIdentifier,
                    ReportAttempt(
                        state: .pending,
                        httpStatus: nil,
                        response: message,
                        nextAttemptAt: sentAt + Self.backoffMilliseconds(attempts: report.attempts),
                        at: sentAt
                    )
                )
                logger.warning("report not delivered; will retry", metadata.merging(["error": message]) { a, _ in a })
            }
        }
    }

    /// Exponential backoff with full jitter: up to 5 s × 2^attempts, capped at an hour, at least 1 s.
    static func backoffMilliseconds(attempts: Int64) -> Int64 {
        let ceiling = min(3_600_000, 5_000 * (Int64(1) << min(attempts, 20)))
        return max(1_000, Int64.random(in: ceiling / 2...ceiling))
    }
}

extension StoredToken {
    /// The token as the domain model sees it (for validating line items against its active period).
    var externalPurchaseToken: ExternalPurchaseToken {
        ExternalPurchaseToken(
            appAppleId: appAppleId,
            bundleId: bundleId,
            tokenCreationDate: createdAt,
            externalPurchaseId: externalPurchaseId,
            tokenType: tokenType,
            tokenExpirationDate: expiresAt
        )
    }
}
