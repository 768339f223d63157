import Lifecycle
import Logging
import Storage
import Synchronization

/// One pass over an outbox: `Settings.concurrency` threads take due items and deliver them, while the caller may
/// go on adding items (reporting plans alongside), so one slow or hanging call holds one item, not all of them.
/// No item is sent twice in a pass. The sender knows nothing of what a delivery is: the caller's `deliver` sends
/// one item and records its attempt in the outbox, and `maySend` says whether sending may go on (not stopping, not
/// paused, not blocked).
///
/// A pass opens with one item: when the receiver refuses us all (Apple's 401, a key that cannot sign), it does so
/// once, not once per sender. The others join when that answer is in, or after `probeWaitMilliseconds`. A call
/// still unanswered well past the pass's typical answer time gives its place up: a new sender takes over, and the
/// slow one ends once its call returns (answered or timed out), so calls that hang until the request timeout cost
/// threads, not throughput, up to (`Settings.lingeringPerSender` + 1) × `concurrency` calls in flight at most.
///
/// Every span of the pass (the probe's wait, a slow call, the pause between looks at the outbox) is read from the
/// clock, so a test's `ManualClock` decides them.
final class OutboxSender<Box: Outbox>: Sendable {
    struct Settings: Sendable {
        var concurrency: Int
        /// How long a claim is ours; items are claimed only as senders take them up, so none waits beyond it.
        var leaseMilliseconds: Int64
        /// Items claimed per look at the outbox.
        var claimLimit: Int
        /// Extra senders a slow call may bring in per sender; 0 keeps the pass at `concurrency` (an outbox
        /// whose items must go in order).
        var lingeringPerSender: Int
        /// The pass's moment when it was given one (tests, the CLI); otherwise the clock, read at each look, so
        /// an item that comes due during the pass (the retry of a timed-out call) goes out in it.
        var fixedNow: Int64?
        /// Names the pass's threads (`<name>-0`, `<name>-watch`).
        var threadName: String
    }

    private struct Work {
        var buffer: [Box.Item] = []
        /// Items sent (or being sent) in this pass.
        var taken: Set<String> = []
        /// Claimed items this pass will not send (already sent in it).
        var declined: [String] = []
        var addingDone = false
        /// The pass's first item is answered, or the probe wait is over.
        var probed = false
        /// Senders with a call in flight, and since when (the clock's monotonic reading).
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
        /// A look failed (the database away): said once a pass, not once by each of its senders.
        var readFailed = false
    }

    private enum Next {
        case item(Box.Item)
        case wait
        case done
    }

    let outbox: Box
    let settings: Settings
    let clock: Clock
    let logger: Logger
    private let deliver: @Sendable (Box.Item) -> Bool
    private let maySend: @Sendable (Int64) -> Bool
    private let work = Mutex(Work())
    /// Idle senders wait on this: new items, an answer, the end of adding, or the clock wakes them.
    private let more: WakeUp
    /// The watcher waits on this between looks; `finish` ends its wait.
    private let watcherWakeUp: WakeUp
    private let watcher = Mutex<BackgroundThread?>(nil)
    /// When the pass began, on the clock's monotonic reading.
    private let started: UInt64

    static var probeWaitMilliseconds: Double { 500 }
    /// A call is treated as hanging once it takes four times the pass's typical answer time (a moving average),
    /// between these bounds: a hanging call then costs its sender a fraction of a second, not the timeout.
    static var slowCallBounds: (minimumMilliseconds: Double, maximumMilliseconds: Double) { (500, 2_000) }

    /// `deliver` sends one item, records its attempt, and returns whether the item left the pending state.
    init(
        outbox: Box,
        settings: Settings,
        clock: Clock,
        logger: Logger,
        maySend: @escaping @Sendable (_ now: Int64) -> Bool,
        deliver: @escaping @Sendable (Box.Item) -> Bool
    ) {
        self.outbox = outbox
        self.settings = settings
        self.clock = clock
        self.logger = logger
        self.maySend = maySend
        self.deliver = deliver
        more = WakeUp(clock: clock)
        watcherWakeUp = WakeUp(clock: clock)
        started = clock.uptimeNanoseconds()
    }

    /// A whole pass for a caller that adds nothing meanwhile: start, then finish once nothing more is due.
    func run() {
        start()
        finish()
    }

    /// Starts the senders (and the watcher of slow calls, when they may be replaced).
    func start() {
        let count = max(1, settings.concurrency)
        work.withLock { work in
            for _ in 0..<count { addSender(&work) }
        }
        guard settings.lingeringPerSender > 0 else { return }
        let limit = count * (settings.lingeringPerSender + 1)
        let thread = BackgroundThread(name: "\(settings.threadName)-watch") { [self] in watch(limit: limit) }
        watcher.withLock { $0 = thread }
    }

    /// New items are in the outbox: idle senders look again.
    func moreAdded() {
        for _ in 0..<work.withLock({ $0.senders }) { more.signal() }
    }

    /// Adding is over: senders stop once nothing more is due. Returns when every send has its answer, after
    /// giving back the claims no sender took.
    func finish() {
        work.withLock { $0.addingDone = true }
        moreAdded()
        // Senders added while these are joined (replacing a slow call) are joined too.
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
        watcher.withLock { $0 }?.join()
        let unsent = work.withLock { work in
            defer { (work.buffer, work.declined) = ([], []) }
            return work.buffer.map(Box.key(of:)) + work.declined
        }
        guard !unsent.isEmpty else { return }
        do {
            try outbox.release(unsent)
        } catch {
            logger.warning("claimed items not released", ["error": "\(error)"])
        }
    }

    /// Starts a sender under the lock (its first look at `work` waits until the caller lets go).
    private func addSender(_ work: inout Work) {
        let index = work.senders
        work.senders += 1
        work.threads.append(BackgroundThread(name: "\(settings.threadName)-\(index)") { [self] in run(index) })
    }

    /// Replaces senders whose call is slower than `slowCall`, up to `limit` senders in all; looks every 50 ms
    /// of the clock's time.
    private func watch(limit: Int) {
        while true {
            let finished = work.withLock { work -> Bool in
                guard !work.finished else { return true }
                let now = clock.uptimeNanoseconds()
                let slowCall = min(
                    max(4 * (work.typicalMilliseconds ?? 250), Self.slowCallBounds.minimumMilliseconds),
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
            watcherWakeUp.wait(until: clock.nowMilliseconds() + 50)
        }
    }

    private func run(_ index: Int) {
        while maySend(now()) {
            switch next() {
            case .item(let item):
                let sentAt = clock.uptimeNanoseconds()
                work.withLock { $0.inFlight[index] = sentAt }
                let settled = deliver(item)
                let milliseconds = Double(clock.uptimeNanoseconds() &- sentAt) / 1e6
                let replaced = work.withLock { work in
                    work.inFlight[index] = nil
                    if settled {
                        work.typicalMilliseconds =
                            work.typicalMilliseconds.map { 0.9 * $0 + 0.1 * milliseconds } ?? milliseconds
                    }
                    if !settled && settings.fixedNow == nil {
                        // A live pass sends it again once its backoff is over, if the pass is still going.
                        work.taken.remove(Box.key(of: item))
                    }
                    work.probed = true
                    return work.replaced.contains(index)
                }
                // The probe is answered, or a call is over: idle senders look again (the pass may be done, or
                // this call's retry due).
                moreAdded()
                if replaced { return }
            case .wait:
                more.wait(until: clock.nowMilliseconds() + 50)
            case .done:
                return
            }
        }
    }

    private func now() -> Int64 {
        settings.fixedNow ?? clock.nowMilliseconds()
    }

    private func next() -> Next {
        work.withLock { work in
            if !work.probed && !work.taken.isEmpty {
                guard Double(clock.uptimeNanoseconds() &- started) / 1e6 >= Self.probeWaitMilliseconds else {
                    return .wait
                }
                work.probed = true
            }
            if work.buffer.isEmpty {
                if let look = look(&work) { return look }
            }
            while let item = work.buffer.popLast() {
                // Held back since it was claimed (Apple began refusing its app): given back at the end.
                if outbox.holdsBack(item) {
                    work.declined.append(Box.key(of: item))
                    continue
                }
                work.taken.insert(Box.key(of: item))
                return .item(item)
            }
            return .wait
        }
    }

    /// Claims what is due into the buffer; what the sender does when there is nothing, or nil to take an item.
    private func look(_ work: inout Work) -> Next? {
        let addingDone = work.addingDone
        if !addingDone || !work.inFlight.isEmpty, let last = work.foundNothingAt,
            Double(clock.uptimeNanoseconds() &- last) / 1e6 < 100
        {
            return .wait
        }
        let due: [Box.Item]
        do {
            // Items still pending from this pass come back from the query; ask for enough beyond them. Claimed,
            // not just read: another instance on the same database skips these while we send.
            let now = now()
            due = try outbox.claimDue(
                now: now,
                limit: settings.claimLimit,
                leaseUntil: now + settings.leaseMilliseconds
            )
        } catch {
            if !work.readFailed {
                logger.error("due items could not be read from the outbox", ["error": "\(error)"])
            }
            work.readFailed = true
            return .done
        }
        work.buffer = due.filter { !work.taken.contains(Box.key(of: $0)) }.reversed()
        // Sent once in this pass already (a retry due again at this pass's time): not again, and the claim is
        // given back at the end.
        work.declined += due.map(Box.key(of:)).filter { work.taken.contains($0) }
        // While calls are in flight (slow ones linger), their retries may come due: keep looking.
        guard work.buffer.isEmpty else { return nil }
        work.foundNothingAt = clock.uptimeNanoseconds()
        return addingDone && (settings.fixedNow != nil || work.inFlight.isEmpty) ? .done : .wait
    }
}
