import Foundation
import Testing

@testable import Storage

@Suite("The WAL's size")
struct WALSizeLimitTests {
    /// A WAL grown past the limit (a long read during heavy writes) is cut back once a checkpoint lets it start
    /// over: it grew by steps for as long as the server ran (83 MB after half an hour of mixed traffic).
    @Test func aWALGrownPastTheLimitIsCutBackOnceItStartsOver() throws {
        let folder = LedgerTests.TemporaryFolder()
        let ledger = try Ledger(directory: folder.path)
        defer { ledger.close() }
        let wal = folder.path + "/linkout.sqlite-wal"
        func walBytes() -> Int { ((try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? Int) ?? 0 }
        let filler = String(repeating: "x", count: 60_000)
        // A reader holds its snapshot while the writer writes past the limit: nothing can be checkpointed away.
        try ledger.database.readers.readSnapshot { reader throws(StorageError) in
            _ = try reader.query("SELECT count(*) FROM settings")
            for index in 0..<700 {
                try ledger.database.writer.write { connection throws(StorageError) in
                    try connection.query(
                        "INSERT INTO settings (name, value) VALUES (?, ?)",
                        [.text("filler.\(index)"), .text(filler)]
                    )
                }
            }
        }
        #expect(walBytes() > SQLDatabase.walSizeLimit, "\(walBytes())")
        // The reader gone, the next commit's checkpoint lets the WAL start over, and the write after it cuts it
        // back.
        for index in 0..<3 {
            try ledger.database.writer.write { connection throws(StorageError) in
                try connection.query("DELETE FROM settings WHERE name = ?", [.text("filler.\(index)")])
            }
        }
        #expect(walBytes() <= SQLDatabase.walSizeLimit, "\(walBytes())")
    }
}
