import Foundation
import Lifecycle
import Logging
import Payments
import Storage
import Synchronization

/// Acts on stored payment events: each becomes one `PaymentChange` (purchase, charge, session state, Apple line
/// items) written in one transaction that also marks the event processed, so a redelivery, a crash or a second
/// pass never makes anything twice. Events are acted on from storage, never from the request: the webhook
/// stores first and answers, then asks for a pass. An event that arrives before what it depends on (Stripe does
/// not promise order: a refund before its purchase) stays unprocessed and is tried again on the next pass.
final class PaymentEventProcessor: Sendable {
    let ledger: Ledger
    let mapper: PaymentChangeMapper
    let logger: Logger
    let clock: Clock
    private let passLock = Mutex(())
    private let worker = PeriodicWorker()

    /// Events still waiting for what they depend on after this long are given up on (and logged): Stripe
    /// stops redelivering after three days too.
    static let giveUpAfterMilliseconds: Int64 = 3 * 86_400_000

    /// Runs after changes were written (wakes reporting and the webhook sender).
    let onChange: @Sendable () -> Void

    init(
        ledger: Ledger,
        mapper: PaymentChangeMapper,
        logger: Logger,
        clock: Clock,
        onChange: @escaping @Sendable () -> Void
    ) {
        self.ledger = ledger
        self.mapper = mapper
        self.logger = logger
        self.clock = clock
        self.onChange = onChange
    }

    /// Acts on every stored event not yet processed, oldest first. Returns how many were processed.
    @discardableResult
    func processPending() -> Int {
        passLock.withLock { _ in
            var processed = 0
            do {
                for event in try ledger.paymentEvents(unprocessedOnly: true, dueAt: clock.nowMilliseconds(), limit: 500)
                where process(event) {
                    processed += 1
                }
            } catch {
                logger.error("payment events could not be read", ["error": "\(error)"])
            }
            if processed > 0 { onChange() }
            return processed
        }
    }

    /// Applies a change that no stored event carries (a demo payment), under the same lock as event passes.
    func apply(_ change: PaymentChange) throws(StorageError) {
        try passLock.withLock { _ throws(StorageError) in try ledger.apply(change) }
        onChange()
    }

    private func process(_ event: StoredPaymentEvent) -> Bool {
        let metadata = [
            "payment.provider": event.provider, "payment.event_id": event.eventId, "payment.type": event.type,
        ]
        do {
            switch try mapper.change(for: event, at: clock.nowMilliseconds()) {
            case .apply(let change):
                try ledger.apply(change)
                // A paid sale that cannot become an Apple line item needs a person: say so loudly.
                if change.outcome.contains("not reportable") {
                    logger.error("payment event processed", metadata.merging(["outcome": change.outcome]) { a, _ in a })
                } else if !change.heldLineItems.isEmpty {
                    // Revenue Apple cannot take yet (no token of the customer active at its date): logged once,
                    // shown on the dashboard until a token of the customer places it.
                    logger.warning(
                        "payment event processed; line item held",
                        metadata.merging(["outcome": change.outcome]) { a, _ in a }
                    )
                } else {
                    logger.info("payment event processed", metadata.merging(["outcome": change.outcome]) { a, _ in a })
                }
                return true
            case .wait(let reason):
                if clock.nowMilliseconds() - event.receivedAt > Self.giveUpAfterMilliseconds {
                    try ledger.apply(
                        PaymentChange(
                            event: (event.provider, event.eventId),
                            outcome: "gave up: \(reason)",
                            at: clock.nowMilliseconds()
                        )
                    )
                    logger.error("payment event given up", metadata.merging(["reason": reason]) { a, _ in a })
                    return true
                }
                // Put off, longer the older it is, so waiting events never hold up the queue behind them.
                let age = clock.nowMilliseconds() - event.receivedAt
                try ledger.deferPaymentEvent(
                    provider: event.provider,
                    eventId: event.eventId,
                    until: clock.nowMilliseconds() + max(30_000, age / 10),
                    reason: reason
                )
                logger.notice("payment event waits", metadata.merging(["reason": reason]) { a, _ in a })
                return false
            }
        } catch {
            logger.error("payment event failed", metadata.merging(["error": "\(error)"]) { a, _ in a })
            return false
        }
    }

    /// Passes every `interval`, or at once when woken (a webhook was stored).
    func start(interval: Int64) {
        worker.start(name: "linkout-payments", interval: .seconds(Int(interval))) { [self] in processPending() }
    }

    func wake() { worker.wake() }

    func stop() { worker.stop() }
}
