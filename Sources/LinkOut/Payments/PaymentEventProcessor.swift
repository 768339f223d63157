import Domain
import Foundation
import Lifecycle
import Logging
import Payments
import Storage
import Synchronization

/// Acts on stored payment events: each becomes one `PaymentChange` (purchase, charge, session state, Apple line
/// items) written in one transaction that also marks the event processed, so a redelivery, a crash or a second
/// pass never makes anything twice. Events are acted on from storage, never from the request: the webhook
/// stores first and answers, then asks for a pass; the demo's page stores its answer the same way. Each event is
/// decoded by its provider (`+Providers`). An event that arrives before what it depends on (providers do not
/// promise order: a refund before its purchase) stays unprocessed and is tried again on the next pass.
final class PaymentEventProcessor: BackgroundService {
    let ledger: Ledger
    let mapper: PaymentChangeMapper
    /// The providers whose stored events this acts on, by id: each decodes (and may resolve) its own.
    let providers: [any PaymentProvider]
    /// How the catalog's prices carry tax, for a provider that works none out (`payments.taxRates`).
    let taxRates: TaxRates
    let logger: Logger
    /// Counts the events that need a person (`linkout_payment_events_needing_a_person_total`).
    let metrics: Metrics?
    let clock: Clock
    /// A pass this often when not woken sooner (`reporting.pollIntervalSeconds`).
    let intervalMilliseconds: Int64
    /// Held events are read this many at a time, by key, until all were tried.
    let heldPageSize: Int
    private let passLock = Mutex(())
    private let worker: PeriodicWorker

    /// Why an event needs a person, as `linkout_payment_events_needing_a_person_total` counts it: money the
    /// provider reported that linkout made no Apple line item of (an event it cannot read, a sale it cannot
    /// report) or gave up waiting for what it needed. The log says which event; the alert rules watch the count.
    static let needingAPersonReasons = ["not_reportable", "given_up"]

    private func countNeedingAPerson(_ reason: String) {
        metrics?.increment("linkout_payment_events_needing_a_person_total", [("reason", reason)])
    }

    /// Events still waiting for what they depend on after this long are given up on (and logged): Stripe
    /// stops redelivering after three days too.
    static let giveUpAfterMilliseconds: Int64 = Milliseconds.days(3)

    /// Runs after changes were written (wakes reporting and the webhook sender).
    let onChange: @Sendable () -> Void

    init(
        ledger: Ledger,
        mapper: PaymentChangeMapper,
        providers: [any PaymentProvider],
        taxRates: TaxRates = .none,
        logger: Logger,
        metrics: Metrics? = nil,
        clock: Clock,
        intervalMilliseconds: Int64,
        heldPageSize: Int = 500,
        onChange: @escaping @Sendable () -> Void
    ) {
        self.ledger = ledger
        self.mapper = mapper
        self.providers = providers
        self.taxRates = taxRates
        self.logger = logger
        self.metrics = metrics
        self.clock = clock
        self.intervalMilliseconds = intervalMilliseconds
        worker = PeriodicWorker(clock: clock)
        self.heldPageSize = heldPageSize
        self.onChange = onChange
    }

    /// Acts on every stored event not yet processed, oldest first. Returns how many were processed.
    @discardableResult
    func processPending() -> Int {
        passLock.withLock { _ in
            var processed = releaseHeldEvents()
            if processed > 0 { onChange() }
            // An event acted on can make others due at once (a purchase wakes the refund delivered before it): the
            // reading goes on while it acts on something, a bounded number of times, and not while stopping.
            // Reporting and the webhooks hear of each reading's changes as it ends.
            for _ in 0..<Self.readingsPerPass where !worker.isStopping {
                let acted = actOnDueEvents()
                processed += acted
                if acted == 0 { break }
                onChange()
            }
            return processed
        }
    }

    /// One more look at an event just put off; true when it is processed now.
    private func processIfDueNow(_ event: StoredPaymentEvent) throws -> Bool {
        guard case .apply = try decision(for: event, mapper: mapper, at: clock.nowMilliseconds(), announcing: false)
        else { return false }
        return process(event, lookingAgain: true)
    }

    /// How many times a pass reads the due events again after acting on some.
    static let readingsPerPass = 8

    /// Acts on the events due now, at most 500; returns how many were processed.
    private func actOnDueEvents() -> Int {
        var acted = 0
        do {
            let due = try ledger.payments.paymentEvents(
                unprocessedOnly: true,
                dueAt: clock.nowMilliseconds(),
                limit: 500
            )
            for event in due where process(event) { acted += 1 }
        } catch {
            logger.error("payment events could not be read", ["error": "\(error)"])
        }
        return acted
    }

    /// Acts on `event`; true once it is processed. `lookingAgain`: this is the one more look after putting it off
    /// behind a hold (below).
    private func process(_ event: StoredPaymentEvent, lookingAgain: Bool = false) -> Bool {
        let metadata = [
            "payment.provider": event.provider.rawValue, "payment.event_id": event.eventId, "payment.type": event.type,
        ]
        do {
            switch try decision(for: event, mapper: mapper, at: clock.nowMilliseconds()) {
            case .apply(let made):
                let change = try LineItemScreen(ledger: ledger).screened(made, now: clock.nowMilliseconds())
                try ledger.payments.apply(change)
                // A paid sale that cannot become an Apple line item, or waits for a rate, needs a person: say so
                // loudly.
                if change.outcome.needsAPerson { countNeedingAPerson("not_reportable") }
                if change.outcome.needsAPerson || change.hold != nil {
                    logger.error(
                        "payment event processed",
                        metadata.merging(["outcome": "\(change.outcome)"]) { a, _ in a }
                    )
                } else if !change.setAside.isEmpty {
                    logger.error(
                        "payment event processed; line item set aside: Apple would refuse it",
                        metadata.merging([
                            "outcome": "\(change.outcome)",
                            "line_item_ids": change.setAside.map(\.lineItemId.rawValue).joined(separator: ","),
                        ]) { a, _ in a }
                    )
                } else if case .notReported = change.outcome {
                    // Money that does not go to Apple (README, "What linkout reports"): the reason is the outcome.
                    logger.warning(
                        "payment event processed; money not reported to Apple",
                        metadata.merging(["outcome": "\(change.outcome)"]) { a, _ in a }
                    )
                } else if !change.lineItemsAwaitingToken.isEmpty {
                    // Revenue Apple cannot take yet (no token of the customer active at its date): logged once,
                    // shown on the dashboard until a token of the customer places it.
                    logger.warning(
                        "payment event processed; line item held",
                        metadata.merging(["outcome": "\(change.outcome)"]) { a, _ in a }
                    )
                } else {
                    logger.info(
                        "payment event processed",
                        metadata.merging(["outcome": "\(change.outcome)"]) { a, _ in a }
                    )
                }
                return true
            case .holdBehind(let token, let reason):
                // Not given up: the release of the held line item before it makes it due at once.
                try ledger.payments.deferBehindHold(
                    provider: event.provider,
                    eventId: event.eventId,
                    externalPurchaseId: token,
                    until: clock.nowMilliseconds() + Milliseconds.hour,
                    reason: reason
                )
                logger.notice("payment event waits", metadata.merging(["reason": reason]) { a, _ in a })
                // What it waits for may have come while this decision was made (Apple accepted the report, a
                // chargeback was applied), and that wake-up found nothing put off yet to wake: one more look now,
                // not an hour later.
                guard !lookingAgain else { return false }
                return try processIfDueNow(event)
            case .wait(let reason):
                if clock.nowMilliseconds() - event.receivedAt > Self.giveUpAfterMilliseconds {
                    try ledger.payments.apply(
                        PaymentChange(
                            event: (event.provider, event.eventId),
                            outcome: "gave up: \(reason)",
                            at: clock.nowMilliseconds()
                        )
                    )
                    logger.error("payment event given up", metadata.merging(["reason": reason]) { a, _ in a })
                    countNeedingAPerson("given_up")
                    return true
                }
                // Put off, longer the older it is, so waiting events never hold up the queue behind them.
                let age = clock.nowMilliseconds() - event.receivedAt
                try ledger.payments.deferPaymentEvent(
                    provider: event.provider,
                    eventId: event.eventId,
                    until: clock.nowMilliseconds() + max(30_000, age / 10),
                    reason: reason
                )
                logger.notice("payment event waits", metadata.merging(["reason": reason]) { a, _ in a })
                // The purchase it waits for may have come (on another instance) while this was decided, and its
                // wake-up found nothing put off yet to wake: one more look now, as behind a hold.
                guard !lookingAgain, reason.hasSuffix(PaymentStore.noPurchaseYet) else { return false }
                return try processIfDueNow(event)
            }
        } catch let error as StorageError where error.code == .conflict {
            // Another instance changed what this event was worked out from (a refund of the same charge): nothing
            // was written, and the next pass works it out again.
            logger.notice("payment event worked out again", metadata.merging(["reason": error.message]) { a, _ in a })
            return false
        } catch {
            logger.error("payment event failed", metadata.merging(["error": "\(error)"]) { a, _ in a })
            return false
        }
    }

    /// Makes the line items of held events whose exchange rate has arrived, oldest first; a token whose oldest
    /// held item still waits keeps its later ones held too, so Apple gets each token's items in order.
    /// Returns how many were released. Every held event is tried, a page at a time by key: events still waiting
    /// for their rate never keep those behind them from being tried.
    private func releaseHeldEvents() -> Int {
        var released = 0
        var blocked: Set<String> = []
        var releasing = mapper
        releasing.releasing = true
        var after: HeldPaymentEvent.Key?
        do {
            while true {
                let page = try ledger.payments.heldPaymentEvents(after: after, limit: heldPageSize)
                guard let last = page.last else { break }
                after = last.key
                released += try release(page, blocked: &blocked, mapper: releasing)
            }
        } catch {
            logger.error("held line items could not be released", ["error": "\(error)"])
        }
        return released
    }

    /// Releases the events of `page` whose rate has arrived; a token whose earlier event still waits is `blocked`.
    private func release(_ page: [HeldPaymentEvent], blocked: inout Set<String>, mapper releasing: PaymentChangeMapper)
        throws -> Int
    {
        var released = 0
        for held in page where !blocked.contains(held.externalPurchaseId.rawValue) {
            let now = clock.nowMilliseconds()
            // Whether its rate has come is read from the event alone: completing it from the provider's API first
            // asked Paddle for the customer's country for every held sale at every pass, and a pass follows each
            // webhook (300 calls for 50 unrelated webhooks with six sales held; Paddle allows 240 a minute).
            guard
                case .apply(let look) = try decision(
                    for: held.event,
                    mapper: releasing,
                    at: now,
                    announcing: false,
                    resolving: false
                ),
                look.hold == nil,
                case .apply(let change) = try decision(for: held.event, mapper: releasing, at: now),
                change.hold == nil
            else {
                blocked.insert(held.externalPurchaseId.rawValue)
                continue
            }
            do {
                try ledger.payments.apply(
                    try LineItemScreen(ledger: ledger).screened(
                        try releaseChange(change, from: held, at: now),
                        now: now
                    )
                )
            } catch let error as StorageError where error.code == .conflict {
                // Another instance changed the purchase meanwhile: this event is released at the next pass, worked
                // out from the row as it is then; the token's later events wait behind it, the other tokens' go on.
                logger.notice("held payment event worked out again", ["reason": error.message])
                blocked.insert(held.externalPurchaseId.rawValue)
                continue
            }
            released += 1
            let metadata = [
                "payment.provider": held.event.provider.rawValue, "payment.event_id": held.event.eventId,
                "outcome": "\(change.outcome)",
            ]
            if !change.lineItemsAwaitingToken.isEmpty {
                // Its rate is known now, but no token of the customer is active at its date: it stays held
                // until one is (`LineItemPlacement`), shown on the dashboard.
                logger.warning("held line item released; held for a token", metadata)
            } else if change.lineItems.isEmpty {
                logger.error("held payment event released without a line item", metadata)
            } else {
                logger.notice("held line item released", metadata)
            }
        }
        return released
    }

    /// The release of a held event: everything the mapper made of it now that its rate is known. A renewal no
    /// active token can carry comes as a held line item, and the purchase carries the paid days on. The
    /// purchase's status stays the stored one: what happened to it since (an end, a refund) is not undone by
    /// the event made again.
    private func releaseChange(_ change: PaymentChange, from held: HeldPaymentEvent, at now: Int64) throws(StorageError)
        -> PaymentChange
    {
        var purchase = change.purchase
        var asRead: PurchaseRecord?
        if let id = purchase?.purchaseId, let stored = try ledger.payments.purchase(id: id) {
            purchase?.status = stored.status
            asRead = stored
        }
        var release = PaymentChange(
            event: nil,
            outcome: "held line item made: \(change.outcome)",
            purchase: purchase,
            charges: change.charges,
            lineItems: change.lineItems,
            release: (held.event.provider, held.event.eventId, held.externalPurchaseId),
            at: now
        )
        // Written only while the row is as the mapper read it: what it worked out (the period's end, the days) came
        // from that read, and a change since then makes it work the event out again.
        release.purchaseAsRead = change.purchaseAsRead ?? asRead
        release.lineItemsAwaitingToken = change.lineItemsAwaitingToken
        // A renewal held for its rate while a later one went to Apple counts its days into that one now: the
        // mapper restates it (none was made while held), and leaving these out left Apple a count too low.
        release.restatements = change.restatements
        release.heldRewrites = change.heldRewrites
        return release
    }

    /// Acts at once on the events stored before a crash or restart, then passes every interval, or at once when
    /// woken (a webhook was stored).
    func start() {
        worker.start(name: "linkout-payments", intervalMilliseconds: intervalMilliseconds) { [self] in
            processPending()
        }
    }

    func wake() { worker.wake() }

    func stop() { worker.stop() }
}
