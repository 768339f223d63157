import Crypto
import Dispatch
import Domain
import ExternalPurchase
import Lifecycle
import Logging
import Outbound
import Storage
import Synchronization

/// Delivers entitlement events from the durable outbox to `webhooks.url` over libcurl: the same event id and
/// bytes on every try, a purchase's events in order, retried with backoff (5 s doubling to an hour) until the
/// retry window (three days) closes, then marked failed and shown at `/admin/webhooks`.
final class WebhookSender: BackgroundService {
    let url: String
    /// Signs every delivery's `Linkout-Signature`, keyed once with `webhooks.secret`.
    let signature: TimestampedHMAC
    let retryForMilliseconds: Int64
    /// How long a claimed delivery stays this instance's (see `Lease`).
    let leaseMilliseconds: Int64
    let ledger: Ledger
    let outbox: WebhookOutbox
    let client: HTTPClient
    let metrics: Metrics
    let logger: Logger
    let clock: Clock
    private let passLock = Mutex(())
    private let worker: PeriodicWorker

    /// How events are sent to the receiver (and how `linkout check --online` probes it): directly, within
    /// `webhooks.timeoutSeconds`. Delivered is the receiver's 2xx: whatever it writes after that is not read (a
    /// large answer used to fail the delivery, which was then sent again and again).
    static func http(_ configuration: Configuration.Webhooks) -> HTTPClient.Configuration {
        var http = HTTPClient.Configuration()
        http.totalTimeout = .seconds(configuration.timeoutSeconds)
        http.readsStatusOnly = true
        return http
    }

    init(
        configuration: Configuration.Webhooks,
        leaseMilliseconds: Int64,
        ledger: Ledger,
        metrics: Metrics,
        logger: Logger,
        clock: Clock
    ) {
        url = configuration.url
        signature = .linkout(secret: configuration.secret)
        retryForMilliseconds = configuration.retryForSeconds * 1000
        self.leaseMilliseconds = leaseMilliseconds
        client = HTTPClient(configuration: Self.http(configuration))
        self.ledger = ledger
        outbox = WebhookOutbox(store: ledger.entitlements)
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        worker = PeriodicWorker(clock: clock)
    }

    /// Deliveries in flight at once: a purchase's events still go one at a time, in order (the outbox claims
    /// none while an earlier one of its purchase is pending), but a receiver that hangs on one purchase's event
    /// holds up that purchase only, not every customer's.
    static let concurrency = 4

    /// Extra calls a hanging one lets in per sender (`OutboxSender.Settings.lingeringPerSender`).
    static let lingeringPerSender = 2

    /// One pass: every due delivery once, each purchase's in its order. Returns how many were delivered.
    @discardableResult
    func deliverDue() -> Int {
        passLock.withLock { _ in
            ledger.bringOutboxesForward(clock: clock, logger: logger)
            let delivered = Atomic<Int>(0)
            OutboxSender(
                outbox: outbox,
                settings: .init(
                    concurrency: Self.concurrency,
                    leaseMilliseconds: leaseMilliseconds,
                    // One per look, sent at once: no claim waits here behind a slow receiver beyond its lease.
                    claimLimit: 1,
                    // A call that hangs past the typical answer gives its place to another sender, up to
                    // `lingeringPerSender` calls each: four purchases whose receiver hung held up every other
                    // customer's events until their timeout. A receiver slow for everyone gets at most three times
                    // `concurrency` calls at once.
                    lingeringPerSender: Self.lingeringPerSender,
                    fixedNow: nil,
                    threadName: "linkout-webhook"
                ),
                clock: clock,
                logger: logger,
                maySend: { [worker] _ in !worker.isStopping }
            ) { [self] delivery in
                do {
                    guard try send(delivery) else { return false }
                    delivered.add(1, ordering: .relaxed)
                    return true
                } catch {
                    logger.error("webhook attempt not recorded", ["error": "\(error)"])
                    return false
                }
            }
            .run()
            return delivered.load(ordering: .relaxed)
        }
    }

    private func send(_ delivery: WebhookDelivery) throws -> Bool {
        let body = Array(delivery.body.utf8)
        let now = clock.nowMilliseconds()
        let request = HTTPClientRequest(
            method: "POST",
            url: url,
            headers: [
                ("Content-Type", "application/json"),
                ("Linkout-Event-Id", delivery.eventId),
                ("Linkout-Event-Type", delivery.type),
                ("Linkout-Signature", signature.header(body: body, timestamp: now / 1000)),
            ],
            body: body
        )
        var status: Int64?
        var problem: String?
        var retryAfter: String?
        do {
            let response = try client.perform(request)
            status = Int64(response.status)
            if !(200..<300).contains(response.status) { problem = "the receiver answered \(response.status)" }
            if Self.statusesWithRetryAfter.contains(response.status) { retryAfter = response.header("retry-after") }
        } catch {
            problem = error.description
        }
        let at = clock.nowMilliseconds()
        let metadata = ["webhook.event_id": delivery.eventId, "webhook.type": delivery.type]
        if problem == nil {
            try outbox.record(
                WebhookAttempt(
                    eventId: delivery.eventId,
                    state: .delivered,
                    httpStatus: status,
                    error: nil,
                    nextAttemptAt: at,
                    at: at
                ),
                for: delivery
            )
            metrics.increment("linkout_webhooks_total", [("outcome", "delivered")])
            logger.info("webhook delivered", metadata)
            return true
        }
        // The window counts from the event's creation, but an event that waited behind an earlier one of its
        // purchase still gets a fair number of tries of its own.
        let givingUp = at - delivery.createdAt >= retryForMilliseconds && delivery.attempts + 1 >= Self.leastTries
        try outbox.record(
            WebhookAttempt(
                eventId: delivery.eventId,
                state: givingUp ? .failed : .pending,
                httpStatus: status,
                error: problem,
                // Given up, nothing more is tried: its last attempt's time, as a delivered event's, and never
                // a retry time ahead that `/admin/webhooks` showed as if one were coming.
                nextAttemptAt: givingUp ? at : Self.retryAt(at, attempts: delivery.attempts, retryAfter: retryAfter),
                at: at
            ),
            for: delivery
        )
        metrics.increment("linkout_webhooks_total", [("outcome", givingUp ? "failed" : "retry")])
        if givingUp {
            logger.error(
                "webhook given up after the retry window",
                metadata.merging(["error": problem ?? ""]) { a, _ in a }
            )
        } else {
            logger.warning(
                "webhook not delivered; will retry",
                metadata.merging(["error": problem ?? ""]) { a, _ in a }
            )
        }
        return false
    }

    /// The answers whose `Retry-After` says when the receiver is ready again (RFC 9110 §10.2.3: a 503's, and a
    /// 429's per RFC 6585 §4).
    static let statusesWithRetryAfter: Set<Int> = [429, 503]

    /// The next try after a failed one: the backoff's, or later when the receiver asked for more time. A receiver
    /// that sheds load with a 429 or 503 was tried again after 5 s, 10 s, ... whatever it asked; what it asks is
    /// held to an hour (`RetryAfter.longestWaitMilliseconds`, the backoff's own ceiling), so a mistaken date
    /// cannot park a purchase's events for days.
    static func retryAt(_ at: Int64, attempts: Int64, retryAfter: String?) -> Int64 {
        let backoff = WebhookOutbox.retryAt(at, attempts: attempts)
        guard let asked = RetryAfter.unixMilliseconds(retryAfter, now: at) else { return backoff }
        return max(backoff, asked)
    }

    /// Tries every event gets before it can be given up.
    static let leastTries: Int64 = 8

    /// Due retries are looked for every second: a cheap indexed query, and a receiver back up is served soon.
    static let intervalMilliseconds: Int64 = 1000

    /// Passes every `intervalMilliseconds`, or at once when woken (a purchase made an event).
    func start() {
        worker.start(name: "linkout-webhooks", intervalMilliseconds: Self.intervalMilliseconds) { [self] in
            deliverDue()
        }
    }

    func wake() { worker.wake() }

    func stop() { worker.stop() }
}
