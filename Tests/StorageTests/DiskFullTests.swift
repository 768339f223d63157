import Dispatch
import Domain
import Foundation
import TestSupport
import Testing

@testable import Storage

#if canImport(Glibc)
import Glibc
#endif

@Suite("Full disk")
struct DiskFullTests {
    /// On a full disk a landing gets `.diskFull` at once and `writeFailure` says why; every visit acknowledged
    /// before is kept; when space returns the next visit is recorded without reopening anything.
    @Test func aFullDiskFailsLandingsQuicklyKeepsWhatWasAcknowledgedAndRecovers() throws {
        // Room for a new ledger's first checkpoint (its file and its WAL, about 0.9 MB each, side by side) and the
        // first visits; the filler then takes the rest. At 2 MiB the first checkpoint itself met the full disk.
        let disk = try SmallFilesystem(bytes: 4 << 20)
        defer { disk.unmount() }
        let ledger = try Ledger(directory: disk.path + "/data", journalSegmentBytes: 16 << 10)
        defer { ledger.close() }
        var acknowledged = 0
        for index in 0..<50 {
            let error = JournalSegmentTests.journal(
                ledger,
                VisitJournalTests.visit("a-\(index)", checkout: "c-\(index)")
            )
            #expect(error == nil)
            if error == nil { acknowledged += 1 }
        }
        #expect(ledger.flush(timeout: .seconds(30)))
        #expect(ledger.writeFailure == nil)

        let filler = try disk.fill()
        // The last free bytes may still take a few records; the disk refuses one soon after.
        var refusal: StorageError?
        var refusedCheckout = ""
        var slowest = Duration.zero
        for index in 0..<2_000 {
            let started = ContinuousClock.now
            let error = JournalSegmentTests.journal(
                ledger,
                VisitJournalTests.visit("f-\(index)", checkout: "d-\(index)")
            )
            slowest = max(slowest, ContinuousClock.now - started)
            guard let error else {
                acknowledged += 1
                continue
            }
            refusal = error
            refusedCheckout = "d-\(index)"
            break
        }
        let error = try #require(refusal, "the full disk took 2,000 visits")
        #expect(error.code == .diskFull, "\(error)")
        #expect(error.systemError == ENOSPC)
        #expect(slowest < .seconds(1), "a visit took \(slowest)")
        #expect(ledger.writeFailure?.code == .diskFull)
        // A visit that failed was not acknowledged, so its checkout is not offered.
        #expect(try ledger.tokens.checkout(id: CheckoutID(refusedCheckout)) == nil)

        try FileManager.default.removeItem(atPath: filler)
        #expect(JournalSegmentTests.journal(ledger, VisitJournalTests.visit("after", checkout: "c-after")) == nil)
        acknowledged += 1
        #expect(ledger.flush(timeout: .seconds(30)))
        #expect(try ledger.tokens.count(.visits) == Int64(acknowledged))
        #expect(ledger.writeFailure == nil)
        #expect(try ledger.tokens.checkout(id: "c-after")?.externalPurchaseId == "after")
    }

    /// A backup on a read-only mount (put there to be looked at) cannot be opened, even by a command that only
    /// reads: the ledger runs in WAL mode, and turning a backup's file to it writes. The error names the file and
    /// what to do, not SQLite's "attempt to write a readonly database".
    /// SQLite calls a write the system refused for want of space a "disk I/O error"; the error's system reason
    /// makes it a full disk, so the commands say to free space (a start on a full disk said only the I/O error).
    @Test func anIOErrorForWantOfSpaceIsAFullDisk() {
        // 778: SQLITE_IOERR_WRITE (SQLITE_IOERR, 10, extended).
        let full = StorageError.sqlite(778, "disk I/O error", systemError: ENOSPC)
        #expect(full.code == .diskFull)
        #expect(full.messageWithReason == "disk I/O error: No space left on device")
        #expect(StorageError.sqlite(778, "disk I/O error", systemError: EIO).code == .sqlite(10))
    }

    @Test func aLedgerOnAReadOnlyMountSaysSoAndWhatToDo() throws {
        let original = LedgerTests.TemporaryFolder()
        try Ledger(directory: original.path + "/data").close()
        // A backup file: one file in rollback-journal mode, which opening turns to WAL.
        _ = try LedgerBackup.backup(directory: original.path + "/data", to: original.path + "/backup.sqlite")
        let disk = try SmallFilesystem(bytes: 4 << 20)
        defer { disk.unmount() }
        // Copied in, so no file is open on the mount when it turns read-only.
        let directory = disk.path + "/data"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        try FileManager.default.copyItem(
            atPath: original.path + "/backup.sqlite",
            toPath: directory + "/linkout.sqlite"
        )
        try disk.remountReadOnly()
        #expect {
            _ = try Ledger(directory: directory, role: .reader, upgrade: .never)
        } throws: { error in
            let error = error as? StorageError
            return error?.code == .readOnly
                && error?.message.contains("\(directory)/linkout.sqlite cannot be written")
                    == true
                && error?.message.contains("copy it somewhere writable") == true
        }
    }
}
