import Dispatch
import Domain
import TestSupport
import Testing

@testable import Storage

@Suite("Journal ingester")
struct JournalIngesterTests {
    static func records(_ range: Range<Int64>) -> [JournalRecord] {
        range.map { ($0, LedgerTests.visit("i-\($0)", checkout: "c-\($0)", at: 1_000 + $0)) }
    }

    /// The batch being committed counts as waiting, with its oldest visit's time; past the limit the journal's
    /// writer waits for room, and goes on once a commit makes it.
    @Test func theBacklogIsReportedAndPastItsLimitTheWriterWaitsForRoom() {
        let gate = DispatchSemaphore(value: 0)
        let ingester = JournalIngester(backlogLimit: 10) { batch throws(StorageError) in
            gate.wait()
            return batch.map { RecordOutcome(checkoutId: $0.visit.checkoutId, visitCount: 1, isNewToken: true) }
        } onIngested: { _, _ in
        } onFailure: { _ in
        }
        defer {
            for _ in 0..<10 { gate.signal() }
            ingester.stop()
        }
        #expect(ingester.backlog == .empty)
        ingester.enqueue(Self.records(1..<6))
        // The ingester took the five and waits at the gate: they are still waiting.
        #expect(eventually(within: 10) { ingester.backlog == IngestionBacklog(visits: 5, oldestAt: 1_001) })
        let writer = DispatchGroup()
        DispatchQueue.global().async(group: writer) { ingester.enqueue(Self.records(6..<16)) }
        #expect(eventually(within: 10) { ingester.backlog.visits == 15 })
        // Fifteen wait, over the limit of ten, and none can go while the gate is shut: the writer still waits.
        #expect(writer.wait(timeout: .now()) == .timedOut)
        gate.signal()
        #expect(writer.wait(timeout: .now() + .seconds(10)) == .success)
    }

    /// An ingester that cannot write lifts the back-pressure: landings are still journaled and answered.
    @Test func aFailingIngesterDoesNotHoldTheWriter() {
        let failed = DispatchSemaphore(value: 0)
        let ingester = JournalIngester(backlogLimit: 2) { _ throws(StorageError) in
            throw StorageError(.diskFull, "no space")
        } onIngested: { _, _ in
        } onFailure: { _ in
            failed.signal()
        }
        ingester.enqueue(Self.records(1..<3))
        #expect(failed.wait(timeout: .now() + .seconds(10)) == .success)
        let writer = DispatchGroup()
        DispatchQueue.global().async(group: writer) { ingester.enqueue(Self.records(3..<10)) }
        #expect(writer.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(ingester.backlog.visits == 9)
        ingester.stop()
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
