import Dispatch
import Domain
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Storage

@Suite("Journal ingester")
struct JournalIngesterTests {
    static func records(_ range: ClosedRange<Int64>) -> [JournalRecord] {
        range.map { ($0, LedgerTests.visit("i-\($0)", checkout: "c-\($0)", at: 1_000 + $0)) }
    }

    /// Past its memory limit the queue keeps only the range of sequences the journal holds, and everything after
    /// goes there too until that range is read back: the tables take visits in journal order.
    @Test func pastItsMemoryLimitTheQueueLeavesVisitsOnDiskInOrder() {
        var queue = IngestionQueue(memoryLimit: 10)
        queue.add(Self.records(1...6))
        queue.add(Self.records(7...12))  // 12 would be over 10: these stay on disk
        queue.add(Self.records(13...13))  // and so does what follows
        #expect(queue.backlog == IngestionBacklog(visits: 13, oldestAt: 1_001))
        guard case .inMemory(let batch) = queue.next(4) else {
            Issue.record("memory first")
            return
        }
        #expect(batch.map(\.sequence) == [1, 2, 3, 4])
        #expect(queue.backlog == IngestionBacklog(visits: 13, oldestAt: 1_001))  // in flight still waits
        queue.finished()
        #expect(queue.backlog == IngestionBacklog(visits: 9, oldestAt: 1_005))
        guard case .inMemory(let rest) = queue.next(4), rest.map(\.sequence) == [5, 6] else {
            Issue.record("the rest of memory")
            return
        }
        queue.finished()
        guard case .onDisk(let first, let last) = queue.next(4), first == 7, last == 13 else {
            Issue.record("then the disk's range")
            return
        }
        #expect(queue.backlog == IngestionBacklog(visits: 7, oldestAt: 1_007))
        queue.tookFromDisk(Self.records(7...10))
        queue.finished()
        queue.add(Self.records(14...14))  // the disk still holds 11-13: this one joins them
        #expect(queue.onDisk?.first == 11 && queue.onDisk?.last == 14)
        queue.tookFromDisk(Self.records(11...14))
        queue.finished()
        #expect(queue.isEmpty && queue.backlog == .empty)
        queue.add(Self.records(15...15))  // the disk range is read: memory again
        guard case .inMemory(let again) = queue.next(4) else {
            Issue.record("memory again")
            return
        }
        #expect(again.map(\.sequence) == [15])
    }

    /// The batch being committed counts as waiting; past the waiting limit the journal's writer waits for room,
    /// and goes on once a commit makes it.
    @Test func pastTheWaitingLimitTheWriterWaitsForRoom() {
        let gate = DispatchSemaphore(value: 0)
        let ingester = JournalIngester(memoryLimit: 4, waitingLimit: 10) { batch throws(StorageError) in
            gate.wait()
            return batch.map { RecordOutcome(checkoutId: $0.visit.checkoutId, visitCount: 1, isNewToken: true) }
        } readBack: { first, last, limit in
            Array(Self.records(first...last).prefix(limit))
        } onIngested: { _, _ in
        } onFailure: { _ in
        }
        defer {
            for _ in 0..<20 { gate.signal() }
            ingester.stop()
        }
        ingester.enqueue(Self.records(1...4))
        // The ingester took the four and waits at the gate: they still wait.
        #expect(eventually(within: 30) { ingester.backlog == IngestionBacklog(visits: 4, oldestAt: 1_001) })
        let writer = DispatchGroup()
        DispatchQueue.global().async(group: writer) { ingester.enqueue(Self.records(5...12)) }
        #expect(eventually(within: 30) { ingester.backlog.visits == 12 })
        // Twelve wait, over the limit of ten, and none can go while the gate is shut: the writer still waits.
        #expect(writer.wait(timeout: .now()) == .timedOut)
        // The four commit: eight wait, and the writer goes on.
        gate.signal()
        #expect(writer.wait(timeout: .now() + .seconds(10)) == .success)
    }

    /// An ingester that cannot write lifts the back-pressure: landings are still journaled and answered.
    @Test func aFailingIngesterDoesNotHoldTheWriter() {
        let failed = DispatchSemaphore(value: 0)
        let ingester = JournalIngester(memoryLimit: 1, waitingLimit: 2) { _ throws(StorageError) in
            throw StorageError(.diskFull, "no space")
        } readBack: { first, last, limit in
            Array(Self.records(first...last).prefix(limit))
        } onIngested: { _, _ in
        } onFailure: { _ in
            failed.signal()
        }
        ingester.enqueue(Self.records(1...2))
        #expect(failed.wait(timeout: .now() + .seconds(10)) == .success)
        let writer = DispatchGroup()
        DispatchQueue.global().async(group: writer) { ingester.enqueue(Self.records(3...9)) }
        #expect(writer.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(ingester.backlog.visits == 9)
        ingester.stop()
    }

    /// A batch given up at a stop (the tables refuse it) ends the ingesting: a later batch committed would move
    /// `journal_applied` past it, and the next open's replay would skip it.
    @Test func aBatchGivenUpAtAStopIsTheLastOneTried() {
        let failed = DispatchSemaphore(value: 0)
        let committed = Mutex<[Int64]>([])
        let ingester = JournalIngester(memoryLimit: 100) { batch throws(StorageError) in
            if batch.contains(where: { $0.sequence == 1 }) { throw StorageError(.sqlite(5), "database is locked") }
            return batch.map { RecordOutcome(checkoutId: $0.visit.checkoutId, visitCount: 1, isNewToken: true) }
        } readBack: { first, last, limit in
            Array(Self.records(first...last).prefix(limit))
        } onIngested: { batch, _ in
            committed.withLock { $0 += batch.map(\.sequence) }
        } onFailure: { _ in
            failed.signal()
        }
        ingester.enqueue(Self.records(1...1))
        #expect(failed.wait(timeout: .now() + .seconds(10)) == .success)
        ingester.enqueue(Self.records(2...3))
        ingester.stop()
        #expect(committed.withLock { $0 } == [])
    }

    /// A ledger that holds 16 visits in memory and whose tables refuse writes, after 300 landings were journaled:
    /// the first batches may fit in the pages the database has, and far more than memory holds wait on disk.
    static func floodedWhileTheTablesRefuse(_ folder: LedgerTests.TemporaryFolder) throws -> Ledger {
        let ledger = try Ledger(
            directory: folder.path,
            durability: .normal,
            journalSegmentBytes: 4096,
            journalMemoryLimit: 16
        )
        try ledger.database.limitPages(1)
        for index in 0..<300 {
            let visit = VisitJournalTests.visit("f-\(index)", checkout: "c-\(index)")
            #expect(JournalSegmentTests.journal(ledger, visit) == nil)
        }
        #expect(ledger.ingestionBacklog.visits > 100)
        return ledger
    }

    /// Visits left on disk at a stop (the tables refused them) are applied by the next open, each once.
    @Test func visitsLeftOnDiskAtAStopAreReplayedOnce() throws {
        let folder = LedgerTests.TemporaryFolder()
        try Self.floodedWhileTheTablesRefuse(folder).close()
        let reopened = try Ledger(directory: folder.path)
        defer { reopened.close() }
        #expect(try reopened.tokens.count(.tokens) == 300)
        #expect(try reopened.tokens.count(.visits) == 300)
        #expect(JournalSegmentTests.segmentFiles(folder.path).isEmpty)
    }

    /// A flood past the memory limit is answered from the journal at once, and every visit reaches the tables
    /// once, read back from the segments; the backlog is reported meanwhile.
    @Test func aFloodPastTheMemoryLimitIsReadBackFromTheJournal() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Self.floodedWhileTheTablesRefuse(folder)
        defer { ledger.close() }
        let recorder = try #require(ledger.visitRecorder as? JournalVisitRecorder)
        #expect(ledger.ingestionBacklog.oldestAt == 1_000)
        #expect(JournalSegmentTests.segmentFiles(folder.path).count > 2)
        try ledger.database.limitPages(nil)
        #expect(ledger.flush())
        #expect(try ledger.tokens.count(.tokens) == 300)
        #expect(try ledger.tokens.count(.visits) == 300)
        #expect(eventually(within: 30) { ledger.ingestionBacklog == .empty })
        // The journal's thread deletes applied segments after the ingester says how far it got, a moment later.
        #expect(eventually(within: 30) { recorder.journal.segmentBytesOnDisk < 300 * 100 })
    }

    /// A batch of landings adds its new tokens to `token_days` once per day at its end, exactly as visit by
    /// visit: repeat sightings add nothing, and each day gets its own count.
    @Test func aBatchCountsItsNewTokensPerDay() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Ledger(directory: folder.path)
        defer { ledger.close() }
        let day = Milliseconds.day
        var batch: [JournalRecord] = []
        for index in 0..<30 {
            let id = "t-\(index % 12)"
            let at = (index % 12 < 5 ? 3 : 4) * day + Int64(index)
            batch.append((Int64(index + 1), LedgerTests.visit(id, checkout: "c-\(id)", at: at)))
        }
        let outcomes = try ledger.database.applyJournaled(batch)
        #expect(outcomes.filter(\.isNewToken).count == 12)
        let rows = try ledger.database.readers.read { connection throws(StorageError) in
            try connection.query("SELECT day, tokens FROM token_days ORDER BY day").map { $0.map { $0.integer ?? -1 } }
        }
        #expect(rows == [[3, 5], [4, 7]])
    }
}
