import Dispatch
import Lifecycle
import Logging
import Storage
import Synchronization
import Testing

@testable import LinkOut

/// The sender loop every outbox runs on, over an outbox in memory and a manual clock: bounded concurrency, a
/// probe first, a hanging call replaced, claims given back; nothing waits in real time for the clock.
@Suite("Outbox sender")
struct OutboxSenderTests {
    /// Items by key: pending until delivered, claimable when due and not leased.
    final class MemoryOutbox: Outbox {
        struct Item: Sendable {
            var key: String
            var attempts: Int64
        }

        struct Entry {
            var due: Int64 = 0
            var leasedUntil: Int64 = 0
            var attempts: Int64 = 0
            var delivered = false
        }

        static let backoff = Backoff.exact
        let entries: Mutex<[String: Entry]>
        let released = Mutex<[String]>([])

        init(_ keys: [String]) {
            entries = Mutex(Dictionary(uniqueKeysWithValues: keys.map { ($0, Entry()) }))
        }

        static func key(of item: Item) -> String { item.key }

        func claimDue(now: Int64, limit: Int, leaseUntil: Int64) throws(StorageError) -> [Item] {
            entries.withLock { entries in
                let due = entries.filter { !$0.value.delivered && $0.value.due <= now && $0.value.leasedUntil <= now }
                    .keys.sorted().prefix(limit)
                for key in due { entries[key]?.leasedUntil = leaseUntil }
                return due.map { Item(key: $0, attempts: entries[$0]?.attempts ?? 0) }
            }
        }

        /// `true`: delivered; `false`: failed, due again after the backoff from `at`.
        func record(_ attempt: (delivered: Bool, at: Int64), for item: Item) throws(StorageError) {
            entries.withLock { entries in
                entries[item.key]?.leasedUntil = 0
                entries[item.key]?.attempts += 1
                if attempt.delivered {
                    entries[item.key]?.delivered = true
                } else {
                    entries[item.key]?.due = Self.retryAt(attempt.at, attempts: item.attempts)
                }
            }
        }

        func release(_ keys: [String]) throws(StorageError) {
            entries.withLock { entries in
                for key in keys { entries[key]?.leasedUntil = 0 }
            }
            released.withLock { $0 += keys }
        }

        var delivered: Set<String> { entries.withLock { Set($0.filter { $0.value.delivered }.keys) } }
    }

    /// What the deliveries saw: the order, and the most in flight at once.
    final class Deliveries: Sendable {
        let order = Mutex<[String]>([])
        let inFlight = Atomic<Int>(0)
        let most = Atomic<Int>(0)

        func begin(_ key: String) {
            order.withLock { $0.append(key) }
            let now = inFlight.add(1, ordering: .relaxed).newValue
            most.max(now, ordering: .relaxed)
        }

        func end() { inFlight.subtract(1, ordering: .relaxed) }
    }

    static func sender(
        _ outbox: MemoryOutbox,
        clock: Clock,
        concurrency: Int,
        claimLimit: Int? = nil,
        lingering: Int = 0,
        maySend: @escaping @Sendable (Int64) -> Bool = { _ in true },
        deliver: @escaping @Sendable (MemoryOutbox.Item) -> Bool
    ) -> OutboxSender<MemoryOutbox> {
        OutboxSender(
            outbox: outbox,
            settings: .init(
                concurrency: concurrency,
                leaseMilliseconds: 60_000,
                claimLimit: claimLimit ?? 2 * concurrency,
                lingeringPerSender: lingering,
                fixedNow: nil,
                threadName: "test-outbox"
            ),
            clock: clock,
            logger: Logger(label: "test", level: .critical),
            maySend: maySend,
            deliver: deliver
        )
    }

    @Test func everyDueItemGoesOnceWithAtMostTheConcurrencyInFlight() {
        let time = ManualClock()
        let clock = time.clock
        let keys = (0..<40).map { "item-\($0)" }
        let outbox = MemoryOutbox(keys)
        let seen = Deliveries()
        Self.sender(outbox, clock: clock, concurrency: 4) { item in
            seen.begin(item.key)
            defer { seen.end() }
            // Long enough for the senders to overlap.
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(2))
            try? outbox.record((true, clock.nowMilliseconds()), for: item)
            return true
        }
        .run()
        #expect(outbox.delivered == Set(keys))
        #expect(seen.order.withLock { $0.count } == keys.count)
        #expect(seen.most.load(ordering: .relaxed) <= 4)
    }

    /// The pass opens with one item: until it is answered, nobody else sends (a receiver that refuses us all
    /// does so once).
    @Test func theFirstItemGoesAloneUntilItIsAnswered() {
        let time = ManualClock()
        let clock = time.clock
        let outbox = MemoryOutbox((0..<8).map { "item-\($0)" })
        let seen = Deliveries()
        let firstInFlight = Atomic<Int>(-1)
        Self.sender(outbox, clock: clock, concurrency: 4) { item in
            seen.begin(item.key)
            if seen.order.withLock({ $0.count }) == 1 {
                // While the probe is out (and the clock does not move), nobody else starts.
                _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(50))
                firstInFlight.store(seen.most.load(ordering: .relaxed), ordering: .relaxed)
            }
            seen.end()
            try? outbox.record((true, clock.nowMilliseconds()), for: item)
            return true
        }
        .run()
        #expect(firstInFlight.load(ordering: .relaxed) == 1)
        #expect(outbox.delivered.count == 8)
    }

    /// A call that hangs gives its place up once it is slow by the clock: the rest go out while it hangs.
    @Test func aHangingCallGivesItsPlaceUpWhenTheClockSaysItIsSlow() {
        let time = ManualClock()
        let clock = time.clock
        let outbox = MemoryOutbox(["a", "b", "c"])
        let hangRelease = DispatchSemaphore(value: 0)
        let othersDone = DispatchSemaphore(value: 0)
        let sender = Self.sender(outbox, clock: clock, concurrency: 1, claimLimit: 1, lingering: 2) { item in
            if item.key == "a" {
                hangRelease.wait()
            } else {
                othersDone.signal()
            }
            try? outbox.record((true, clock.nowMilliseconds()), for: item)
            return true
        }
        let pass = BackgroundThread(name: "test-pass") { sender.run() }
        // Nothing replaces "a" while the clock stands still.
        #expect(othersDone.wait(timeout: .now() + .milliseconds(100)) == .timedOut)
        time.advance(by: 2_000)
        #expect(othersDone.wait(timeout: .now() + 10) == .success)
        #expect(othersDone.wait(timeout: .now() + 10) == .success)
        hangRelease.signal()
        pass.join()
        #expect(outbox.delivered == ["a", "b", "c"])
    }

    /// Claims the pass will not send (sending stopped) are given back at its end, not left to their lease.
    @Test func claimsNotSentAreGivenBack() {
        let time = ManualClock()
        let clock = time.clock
        let outbox = MemoryOutbox(["a", "b", "c", "d"])
        let sent = Atomic<Int>(0)
        Self.sender(
            outbox,
            clock: clock,
            concurrency: 1,
            claimLimit: 4,
            maySend: { _ in sent.load(ordering: .relaxed) < 1 }
        ) { item in
            sent.add(1, ordering: .relaxed)
            try? outbox.record((true, clock.nowMilliseconds()), for: item)
            return true
        }
        .run()
        #expect(outbox.delivered == ["a"])
        #expect(Set(outbox.released.withLock { $0 }) == ["b", "c", "d"])
        #expect(outbox.entries.withLock { $0.values.allSatisfy { $0.leasedUntil == 0 } })
    }

    /// A failed item is due again when its backoff is over by the clock (5 s after a first failure), not before.
    @Test func aFailedItemGoesAgainWhenItsBackoffIsOverOnTheClock() {
        let time = ManualClock()
        let clock = time.clock
        let outbox = MemoryOutbox(["a"])
        let tries = Atomic<Int>(0)
        let pass = {
            Self.sender(outbox, clock: clock, concurrency: 1) { item in
                let attempt = tries.add(1, ordering: .relaxed).newValue
                try? outbox.record((attempt > 1, clock.nowMilliseconds()), for: item)
                return attempt > 1
            }
            .run()
        }
        pass()
        #expect(tries.load(ordering: .relaxed) == 1)
        time.advance(by: 4_999)
        pass()
        #expect(tries.load(ordering: .relaxed) == 1)
        time.advance(by: 1)
        pass()
        #expect(tries.load(ordering: .relaxed) == 2)
        #expect(outbox.delivered == ["a"])
    }
}
