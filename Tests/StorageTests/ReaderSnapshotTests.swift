import Foundation
import Testing

@testable import Storage

@Suite("Reads at one moment")
struct ReaderSnapshotTests {
    /// A snapshot read's statements see one moment: a row written between them is seen by neither's count, where
    /// statements on their own each see the ledger as it is then (the close's two counts disagreed under landings).
    @Test func aSnapshotReadSeesOneMomentAndAPlainReadDoesNot() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Ledger(directory: folder.path)
        defer { ledger.close() }
        let database = ledger.database
        let count = "SELECT count(*) FROM settings WHERE name LIKE 'snapshot-%'"
        func write(_ name: String) throws(StorageError) {
            try database.writer.write { connection throws(StorageError) in
                try connection.query("INSERT INTO settings (name, value) VALUES (?, '1')", [.text(name)])
            }
        }
        let (before, after) = try database.readers.readSnapshot { connection throws(StorageError) in
            let before = try connection.query(count).first?.first?.integer
            try write("snapshot-1")
            return (before, try connection.query(count).first?.first?.integer)
        }
        #expect(before == 0)
        #expect(after == 0)
        let (plainBefore, plainAfter) = try database.readers.read { connection throws(StorageError) in
            let before = try connection.query(count).first?.first?.integer
            try write("snapshot-2")
            return (before, try connection.query(count).first?.first?.integer)
        }
        #expect(plainBefore == 1)
        #expect(plainAfter == 2)
    }
}
