import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Storage

@Suite("GroupCommitWriter")
struct GroupCommitWriterTests {
    /// Jobs that write and then fail leave nothing behind, and never take the jobs batched with them down.
    @Test func aFailingJobRollsBackAloneAndItsNeighboursCommit() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-writer-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER PRIMARY KEY)")
        let writer = GroupCommitWriter(connection: connection)
        let results = Mutex<[Int: Bool]>([:])
        let done = DispatchGroup()
        for n in 0..<200 {
            done.enter()
            writer.submit({ connection throws(StorageError) in
                try connection.query("INSERT INTO t (n) VALUES (?)", [.integer(Int64(n))])
                if n % 7 == 0 { throw StorageError(.constraint, "job \(n) fails after writing") }
                return n
            }) { result in
                results.withLock { $0[n] = (try? result.get()) != nil }
                done.leave()
            }
        }
        done.wait()
        writer.stop()
        let reader = try SQLiteConnection(path: path)
        let stored = Set(try reader.query("SELECT n FROM t").compactMap { $0.first?.integer.map(Int.init) })
        let expected = Set((0..<200).filter { $0 % 7 != 0 })
        #expect(stored == expected)
        #expect(results.withLock { $0 }.filter { $0.value }.count == expected.count)
    }

    /// A job whose failure ends the whole transaction (SQLite rolls it back itself after `SQLITE_FULL` in a
    /// statement without a statement journal) stops the batch: the jobs after it never run outside a transaction,
    /// so each counts once when the batch is rerun job by job.
    @Test func aFailureThatEndsTheTransactionStopsTheBatch() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-writer-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let connection = try SQLiteConnection(path: path)
        try connection.execute(
            """
            PRAGMA journal_mode = WAL; CREATE TABLE counter (n INTEGER NOT NULL); INSERT INTO counter VALUES (0);
            CREATE TABLE big (b BLOB)
            """
        )
        let pages = try #require(try connection.query("PRAGMA page_count").first?.first?.integer)
        try connection.execute("PRAGMA max_page_count = \(pages)")  // the database may not grow
        let writer = GroupCommitWriter(connection: connection)
        defer { writer.stop() }
        // The first job holds the writer until the others are queued, so they make one batch (it may run again
        // when its batch is rerun job by job, so it lets the next run through).
        let queued = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        done.enter()
        writer.submit({ _ throws(StorageError) in
            queued.wait()
            queued.signal()
        }) { _ in done.leave() }
        let failures = Mutex<[StorageError]>([])
        let jobs: [String] = [
            "UPDATE counter SET n = n + 1",
            "INSERT INTO big VALUES (randomblob(100000))",  // SQLITE_FULL
            "UPDATE counter SET n = n + 1",
        ]
        for sql in jobs {
            done.enter()
            writer.submit({ connection throws(StorageError) in try connection.execute(sql) }) { result in
                if case .failure(let error) = result { failures.withLock { $0.append(error) } }
                done.leave()
            }
        }
        queued.signal()
        done.wait()
        #expect(failures.withLock { $0.map(\.code) } == [.diskFull])
        let reader = try SQLiteConnection(path: path)
        #expect(try reader.query("SELECT n FROM counter").first?.first?.integer == 2)
    }

    /// A job PostgreSQL rolls back for another writer's sake (a deadlock, 40P01) runs again alone until it gets
    /// through, a bounded number of times; any other failure is the job's answer after one run alone. Its rolled
    /// back runs leave nothing behind.
    @Test(arguments: [(1, true), (5, true), (6, false)])
    func aJobLostToAnotherWriterRunsAgain(losses: Int, succeeds: Bool) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-writer-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER NOT NULL)")
        let writer = GroupCommitWriter(connection: connection)
        let runs = Mutex(0)
        let outcome = Result { () throws(StorageError) in
            try writer.write { connection throws(StorageError) in
                try connection.query("INSERT INTO t (n) VALUES (1)")
                let run = runs.withLock { runs in
                    runs += 1
                    return runs
                }
                if run <= losses { throw StorageError(.postgres("40P01"), "deadlock detected") }
            }
        }
        let otherRuns = Mutex(0)
        let other = Result { () throws(StorageError) in
            try writer.write { _ throws(StorageError) in
                otherRuns.withLock { $0 += 1 }
                throw StorageError(.postgres("23505"), "duplicate key")
            }
        }
        writer.stop()
        #expect(((try? outcome.get()) != nil) == succeeds)
        #expect(runs.withLock { $0 } == min(losses + 1, GroupCommitWriter.runsAloneLostToAnotherWriter + 1))
        #expect((try? other.get()) == nil)
        // Any other failure: its batch's run, then one alone.
        #expect(otherRuns.withLock { $0 } == 2)
        let reader = try SQLiteConnection(path: path)
        #expect(try reader.query("SELECT count(*) FROM t").first?.first?.integer == (succeeds ? 1 : 0))
    }
}
