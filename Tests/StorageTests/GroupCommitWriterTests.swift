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
}
